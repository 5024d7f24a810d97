"""Fixtures for the Hugging Face adapter: the simulated Hugging Face over HTTPS, and clients of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from app.services.hf.client import HuggingFaceClient
from app.services.hf.settings_section import HuggingFaceUrls
from app.services.hf.tuning import HfTuning
from app.simulator import SimSettings, SimulatedHF, SimulatorThread

FAST = {"pending_s": 0.05, "initializing_s": 0.15, "job_scheduling_s": 0.05, "minute_s": 0.2}
# Retries fast enough for tests; a "timeout" fault is given up on after 0.3 s.
QUICK = HfTuning(billing_minute_s=0.2, request_timeout_s=0.3, control_timeout_s=0.3, retries=3, backoff_s=0.01,
                 max_backoff_s=0.5,
                 poll_starting_s=0.02, poll_steady_s=0.05)


def urls_of(sim: SimulatedHF) -> HuggingFaceUrls:
    return HuggingFaceUrls(endpoints=sim.endpoints_url, hub=sim.hub_url, catalog=sim.catalog_url,
                           router=sim.router_url)


def sim_env(sim: Any, minute_s: float) -> dict[str, str]:
    """Environment for a node subprocess that talks to ``sim`` (SimulatedHF or the `info()` dict)."""
    info = sim if isinstance(sim, dict) else (sim.sim if isinstance(sim, SimulatorThread) else sim).info()
    return {
        "PAIRWISE_CA_FILE": str(info["ca_file"]), "PAIRWISE_HF_ENDPOINTS_URL": info["endpoints_url"],
        "PAIRWISE_HF_HUB_URL": info["hub_url"], "PAIRWISE_HF_CATALOG_URL": info["catalog_url"],
        "PAIRWISE_HF_ROUTER_URL": info["router_url"], "PAIRWISE_BILLING_MINUTE_S": str(minute_s),
        "PAIRWISE_HF_TIMEOUT_S": "2", "PAIRWISE_HF_BACKOFF_S": "0.05", "PAIRWISE_HF_MAX_BACKOFF_S": "1",
    }


@pytest.fixture
async def sim_hf() -> AsyncIterator[SimulatedHF]:
    sim = SimulatedHF(SimSettings(**FAST))  # type: ignore[arg-type]
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


def make_client(sim: SimulatedHF, token: str | None = None, tuning: HfTuning = QUICK) -> HuggingFaceClient:
    return HuggingFaceClient(urls_of(sim), token or sim.demo_token, extra_ca=(str(sim.ca_file),), tuning=tuning)


@pytest.fixture
async def hf(sim_hf: SimulatedHF) -> AsyncIterator[HuggingFaceClient]:
    client = make_client(sim_hf)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def sim_thread() -> Iterator[SimulatorThread]:
    """A simulator on its own thread, for tests that drive node processes synchronously."""
    with SimulatorThread(SimSettings(**FAST)) as thread:  # type: ignore[arg-type]
        yield thread


def demo_login(node: Any, sim: SimulatorThread) -> None:
    node.cli("hf", "login", "--token-stdin", stdin=sim.demo_token + "\n")


@pytest.fixture
def sim_factory() -> Iterator[Callable[..., SimulatorThread]]:
    """Simulators with chosen settings (minute_s, pending_s, initializing_s...), each on its own thread."""
    started: list[SimulatorThread] = []

    def make(**settings: Any) -> SimulatorThread:
        thread = SimulatorThread(SimSettings(**{**FAST, **settings})).start()
        started.append(thread)
        return thread

    yield make
    for thread in started:
        thread.stop()


def start_sponsor(node_factory: Any, sim: SimulatorThread, minute_s: float, name: str = "sponsor",
                  login: bool = True, **env: str) -> Any:
    node = node_factory(name, env={**sim_env(sim, minute_s), **env}).start()
    if login:
        demo_login(node, sim)
    return node
