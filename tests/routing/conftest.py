"""A sponsor with two copies of one model under two names: a local engine serving `qwen2.5:7b` with a
1024-token window (refusing longer prompts as llama.cpp does) and a rented endpoint on the simulated
Hugging Face serving `Qwen/Qwen2.5-7B-Instruct` (vLLM, a 4096-token window), linked as one model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from app.harness import NodeProc, TinyProc
from app.simulator import SimulatorThread
from tests.hf.conftest import sim_factory, start_sponsor  # noqa: F401  (sim_factory: a fixture)
from tests.hf.support import L4, control, create, wait_show

LOCAL = "qwen2.5:7b"
REPO = "Qwen/Qwen2.5-7B-Instruct"
LOCAL_WINDOW = 1024
RENTED_WINDOW = 4096
MINUTE_S = 0.2


@dataclass
class TwoCopies:
    node: NodeProc
    local: TinyProc
    sim: SimulatorThread


def rented_running(node: NodeProc, *flags: str) -> dict[str, Any]:
    create(node, "gpu", *L4, "--engine", "vllm", *flags, model=REPO)
    row = wait_show(node, "gpu", "the endpoint to run",
                    lambda r: r["provider_state"] == "running" and r["state"] == "eligible" and r.get("url"))
    control(node).call("POST", "/rented/gpu/probe")
    return row


def make_copies(sim_factory: Any, node_factory: Any, tiny_factory: Any, *rented_flags: str,  # noqa: F811
                **env: str) -> TwoCopies:
    sim = sim_factory(pending_s=0.1, initializing_s=0.2, minute_s=MINUTE_S)
    local = tiny_factory("--api", "openai", "--model", LOCAL, "--context-window", str(LOCAL_WINDOW))
    node = start_sponsor(node_factory, sim, MINUTE_S, **env)
    node.cli("engines", "add", "local", "--url", local.url, "--api", "openai", "--capacity", "64")
    rented_running(node, *rented_flags)
    node.cli("models", "same", LOCAL, REPO)
    return TwoCopies(node, local, sim)


@pytest.fixture
def two_copies(sim_factory: Any, node_factory: Any, tiny_factory: Any) -> Iterator[TwoCopies]:  # noqa: F811
    yield make_copies(sim_factory, node_factory, tiny_factory)
