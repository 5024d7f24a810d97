"""Hugging Face misbehaving under a sponsor node: retries, then a clear state and message; pauses never lost."""

from __future__ import annotations

from typing import Any

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import L4, create, hf_endpoint, hf_state, show, sim_state, wait_show

MINUTE_S = 0.2
FAST_POLLS = {"PAIRWISE_HF_POLL_STEADY_S": "0.1", "PAIRWISE_HF_TIMEOUT_S": "0.5"}


def fault(sim: SimulatorThread, kind: str, count: int, **extra: Any) -> None:
    sim.control("POST", "/_sim/faults", {"target": "management", "kind": kind, "count": count, **extra})


def test_plain_text_error_on_create_is_reported(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    # Three: the preview's plan and the create's own plan each look at the account's endpoint names first
    # (a look-ahead that tolerates a failure); the create itself meets the third.
    fault(sim, "plain_400", 3, path="/v2/endpoint/demo-user")
    failed = node.cli("rented", "create", "gpu", "--model", "HuggingFaceTB/SmolLM2-135M-Instruct", *L4, "--yes",
                      check=False)
    assert failed.returncode == 1
    assert ("creating endpoint demo-user/gpu: Hugging Face answered 400: Failed to parse the request body as JSON: "
            "model.task: expected value at line 1 column 257") in failed.stderr
    assert "Traceback" not in failed.stderr
    assert hf_endpoint(sim, "gpu") is None and node.cli_json("rented", "list") == []


def test_429_and_5xx_are_retried(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S, **FAST_POLLS)
    fault(sim, "429", 2, retry_after=1, path="/v2/endpoint/demo-user")
    create(node, "gpu", *L4)  # the create itself waited out two 429s
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    fault(sim, "500", 3)
    node.cli("rented", "pause", "gpu")
    assert hf_state(sim, "gpu") == "paused"
    assert sim.control("GET", "/_sim/faults") == []  # all three were met, and retried past


def test_persistent_failure_is_a_clear_state_and_the_pause_is_owed(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S, **FAST_POLLS)
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    fault(sim, "500", 10_000)
    row = wait_show(node, "gpu", "the failure shown", lambda r: "state may be stale" in (r["provider_message"] or ""))
    assert row["provider_state"] == "running"
    # The control loop's polls are single attempts (a pause never waits behind retries): it says so
    # in its own words, and asks again on its next tick.
    assert "Hugging Face answered 500: Internal Server Error" in row["provider_message"]
    refused = node.cli("rented", "pause", "gpu", check=False)
    assert refused.returncode == 1 and "pausing endpoint demo-user/gpu: Hugging Face answered 500" in refused.stderr
    assert sim_state(sim, "gpu") == "running"
    sim.control("DELETE", "/_sim/faults")
    wait_until(lambda: sim_state(sim, "gpu") == "paused", what="the owed pause once HF answers again")
    row = wait_show(node, "gpu", "paused, stale note gone", lambda r: r["provider_state"] == "paused")
    assert row["provider_message"] == "Endpoint is paused"
    assert show(node, "gpu")["state"] == "paused"
    assert "Traceback" not in (node.home / "logs" / "node.log").read_text()
