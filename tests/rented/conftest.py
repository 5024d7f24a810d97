"""Fixtures for rented-node tests: the tiny model behind HTTPS with a CA made for the test run,
in-process (for unit tests of the upstream) or in its own process (for node end-to-end tests)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from app.harness import REPO, child_env, read_json_line, stop_process
from app.services.hf.providers import ENDPOINT_STATES, ENDPOINT_TRAITS
from app.services.rented.decl import validate_decl
from app.services.rented.provider import WireTraits
from app.services.rented.upstream import RentedUpstream
from app.simulator.ca import client_ssl_context, generate_tls, server_ssl_context
from app.tinymodel import TinyModelOptions
from app.tinymodel.wire import STATE_KEY, TinyState
from tests.rented.tls_tiny import WARM, build

TOKEN = "rented-test-token-0123456789abcdef"  # long enough to grep for; not shaped like an HF token


@dataclass
class TlsTiny:
    url: str
    ca_file: Path
    app: web.Application

    @property
    def opts(self) -> TinyModelOptions:
        return self.state.opts

    @property
    def state(self) -> TinyState:
        return self.app[STATE_KEY]

    def warm(self, count: int) -> None:
        self.app[WARM]["count"] = count


@pytest.fixture
async def tls_tiny(tmp_path: Path) -> AsyncIterator[TlsTiny]:
    tls = generate_tls(tmp_path / "tls")
    app = build(TinyModelOptions(models=["rented-model"], api="openai", require_token=TOKEN))
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.5, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl_context(tls))
    await site.start()
    try:
        yield TlsTiny(f"https://127.0.0.1:{runner.addresses[0][1]}", tls.ca_file, app)
    finally:
        app[STATE_KEY].closing.set()
        await runner.cleanup()


Make = Callable[..., RentedUpstream]


@pytest.fixture
async def make(tls_tiny: TlsTiny) -> AsyncIterator[Make]:
    made: list[RentedUpstream] = []

    def make_node(token: str | None = TOKEN, **fields: Any) -> RentedUpstream:
        data = {"name": "gpu", "url": tls_tiny.url, "ca_file": str(tls_tiny.ca_file), **fields}
        decl = validate_decl(data)
        # As the manager makes it: with its provider's traits (an endpoint's wait header, its state words).
        traits = ENDPOINT_TRAITS if decl.provider == "huggingface-endpoint" else WireTraits(states=ENDPOINT_STATES)
        node = RentedUpstream(decl, sponsor_name="A", sponsor_id="a-id", token=token, traits=traits)
        made.append(node)
        return node

    yield make_node
    for node in made:
        await node.aclose()


class TlsTinyProc:
    """tests.rented.tls_tiny in its own process."""

    def __init__(self, tls_dir: Path, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.rented.tls_tiny", "--tls-dir", str(tls_dir), *args],
                                     stdout=subprocess.PIPE, text=True, env=child_env(), cwd=REPO)
        info = read_json_line(self.proc)
        self.url: str = info["url"]
        self.ca_file: str = info["ca_file"]
        self._client = httpx.Client(verify=client_ssl_context(Path(self.ca_file)), timeout=5)

    def config(self, **options: Any) -> None:
        self._client.post(f"{self.url}/_tiny/config", json=options).raise_for_status()

    def stats(self) -> dict[str, Any]:
        return self._client.get(f"{self.url}/_tiny/stats").json()

    def warm(self, count: int) -> None:
        self._client.post(f"{self.url}/_tls/warm", json={"count": count}).raise_for_status()

    def stop(self) -> None:
        self._client.close()
        stop_process(self.proc)


@pytest.fixture
def tls_tiny_factory(tmp_path: Path) -> Iterator[Any]:
    started: list[TlsTinyProc] = []

    def make(*args: str) -> TlsTinyProc:
        proc = TlsTinyProc(tmp_path / f"tls-{len(started)}", *args)
        started.append(proc)
        return proc

    yield make
    for proc in started:
        proc.stop()
