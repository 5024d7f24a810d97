"""Outbound HTTPS trust: the system store plus an optional extra CA file.

There is deliberately no way to turn verification off: an extra trust root is
the only knob (for a self-hosted endpoint or the simulated Hugging Face).
"""

from __future__ import annotations

import itertools
import ssl
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import httpx

from app.services.errors import ConfigError


@lru_cache(maxsize=16)
def outbound_ssl_context(extra_ca_files: tuple[str, ...] = ()) -> ssl.SSLContext:
    context = ssl.create_default_context()
    for ca_file in extra_ca_files:
        if not Path(ca_file).is_file():
            raise ConfigError(f"extra CA file {ca_file} does not exist")
        try:
            context.load_verify_locations(cafile=ca_file)
        except ssl.SSLError as exc:
            raise ConfigError(f"extra CA file {ca_file} is not a PEM certificate: {exc}") from exc
    return context


def ca_files(*files: str | None) -> tuple[str, ...]:
    return tuple(sorted({f for f in files if f}))


SHARDS = 8
CONNECTIONS_PER_SHARD = 64


class ClientShards:
    """Several small httpx pools in front of one upstream, used in turn.

    httpcore walks every connection of a pool (a readability check each) whenever a
    request starts or ends, and counts all of them, busy or not, against the keep-alive
    limit, so one big pool costs O(n^2) under many streams and closes idle connections
    it should keep (bench/README.md measured it). Small shards keep each walk short;
    keep-alive equal to the shard's size keeps warm connections warm.
    """

    def __init__(self, factory: Callable[[], httpx.AsyncClient], count: int = SHARDS) -> None:
        self._clients = [factory() for _ in range(count)]
        self._turn = itertools.cycle(self._clients)

    def pick(self) -> httpx.AsyncClient:
        return next(self._turn)

    @property
    def main(self) -> httpx.AsyncClient:
        """For small calls (model lists, probes): one pool is enough."""
        return self._clients[0]

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()


def limits_per_shard() -> httpx.Limits:
    return httpx.Limits(max_connections=CONNECTIONS_PER_SHARD, max_keepalive_connections=CONNECTIONS_PER_SHARD)


def make_client(*, extra_ca: tuple[str, ...] = (), read_timeout_s: float | None = None) -> httpx.AsyncClient:
    """One pool; timeouts on the first byte are enforced by the caller."""
    return httpx.AsyncClient(
        verify=outbound_ssl_context(extra_ca),
        timeout=httpx.Timeout(connect=10.0, read=read_timeout_s, write=30.0, pool=30.0),
        limits=limits_per_shard(),
        trust_env=False,
    )


def make_shards(*, extra_ca: tuple[str, ...] = (), read_timeout_s: float | None = None) -> ClientShards:
    """The pools of one upstream that carries inference traffic."""
    return ClientShards(lambda: make_client(extra_ca=extra_ca, read_timeout_s=read_timeout_s))
