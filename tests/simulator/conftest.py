"""Fixtures for the simulated Hugging Face: a fast in-process simulator and clients that trust its CA."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from app.simulator import SimSettings, SimulatedHF
from app.simulator.ca import client_ssl_context

FAST = {"pending_s": 0.05, "initializing_s": 0.15, "job_scheduling_s": 0.05, "minute_s": 0.2}


@pytest.fixture
async def sim_hf() -> AsyncIterator[SimulatedHF]:
    sim = SimulatedHF(SimSettings(**FAST))  # type: ignore[arg-type]
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


def sim_client(sim: SimulatedHF, token: str | None = None, **kw: Any) -> httpx.AsyncClient:
    """An httpx client for the simulator: CA trusted, verification on, demo token unless told otherwise."""
    headers = {"Authorization": f"Bearer {token or sim.demo_token}"} if token != "" else {}
    return httpx.AsyncClient(base_url=sim.base_url, verify=client_ssl_context(sim.ca_file), headers=headers, **kw)


@pytest.fixture
async def hf(sim_hf: SimulatedHF) -> AsyncIterator[httpx.AsyncClient]:
    async with sim_client(sim_hf) as client:
        yield client


def endpoint_body(name: str, **overrides: Any) -> dict[str, Any]:
    """A create body shaped exactly like huggingface_hub's (hf-api.md §1.3)."""
    body: dict[str, Any] = {
        "compute": {"accelerator": "gpu", "instanceSize": "x1", "instanceType": "nvidia-l4",
                    "scaling": {"maxReplica": 1, "minReplica": 0, "scaleToZeroTimeout": 15}},
        "model": {"framework": "pytorch", "repository": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": None,
                  "image": {"huggingface": {}}, "task": "text-generation"},
        "name": name, "provider": {"region": "us-east-1", "vendor": "aws"}, "type": "authenticated",
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 5.0, step: float = 0.02) -> None:
    """Poll `check` until it is true, failing after `within` seconds (no fixed sleeps in tests)."""
    deadline = time.monotonic() + within
    while not await check():
        assert time.monotonic() < deadline, "condition not reached before the deadline"
        await asyncio.sleep(step)


async def wait_state(client: httpx.AsyncClient, name: str, state: str, namespace: str = "demo-user",
                     within: float = 5.0) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def reached() -> bool:
        response = await client.get(f"/v2/endpoint/{namespace}/{name}")
        seen.update(response.json())
        return bool(seen["status"]["state"] == state)

    await eventually(reached, within)
    return seen
