"""Wake on request against a sponsor process whose view of HF is a step behind HF (simulated HF over HTTPS).

- A request that arrives while the sponsor's idle pause is taken on HF but its answer is still on the
  way (the sponsor still sees the endpoint running) wakes it and is answered, instead of being sent to
  the paused endpoint and refused with HF's "503 Endpoint is paused".
- A request that arrives as the sponsor sees a new endpoint running with its first URL is answered,
  instead of failing with "no URL yet" (the node showed running before it had the URL).
- A request that arrives before HF has given a new endpoint its URL (pending) waits for it, within the
  node's cold-start budget, and is answered.

Each ends with nothing billing: the idle pause that follows is taken on HF and its billing stretch closed.
"""

from __future__ import annotations

from typing import Any

import openai

from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.cost_support import wait_hf_state
from tests.hf.support import L4, MESSAGES, REPO, Events, create, hf_state, ledger_row, show, wait_show

MINUTE_S = 0.2
LATE_S = 4.0  # how long HF's answer takes to come back: the window the request arrives in
# HF's answer must come back before the sponsor gives up on it (it would ask again: a different race).
SLOW_HF = {"PAIRWISE_HF_TIMEOUT_S": "20"}


def ask(node: Any) -> str:
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0, timeout=60)
    answer = client.chat.completions.create(model=REPO, messages=MESSAGES)  # type: ignore[arg-type]
    content = answer.choices[0].message.content
    assert content
    return content


def assert_nothing_billing(sim: SimulatorThread, node: Any) -> None:
    """The idle pause after the answer is taken on HF, seen by the sponsor, and HF's bill has stopped."""
    wait_hf_state(sim, "paused")
    row = wait_show(node, "gpu", "the sponsor sees it paused", lambda r: r["provider_state"] == "paused")
    billed = ledger_row(sim, "gpu")
    assert billed["stretches"] and billed["stretches"][-1]["end"] is not None, f"still billing: {billed}"
    assert row["cost_session_usd"] >= billed["usd"] - 1e-6  # the meter never runs behind HF's bill


def test_a_request_during_an_idle_pause_in_flight_wakes_the_endpoint(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    # HF takes the sponsor's next pause at once; its answer leaves LATE_S later.
    sim.control("POST", "/_sim/faults", {"target": "management", "kind": "late", "path": "/pause",
                                         "delay_s": LATE_S})
    node = start_sponsor(node_factory, sim, MINUTE_S, **SLOW_HF)
    events = Events(node)
    create(node, "gpu", *L4, "--idle-pause-min", "0.02", "--wake-on-request", "on")  # idle after 1.2 s
    wait_hf_state(sim, "paused")  # the idle pause, taken on HF
    assert show(node, "gpu")["provider_state"] == "running"  # its answer is still on the way
    assert ask(node)
    assert events.wait("woke")["node"] == "gpu"
    assert sim.control("GET", "/_sim/faults") == []  # the late answer was the one met
    assert_nothing_billing(sim, node)
    events.close()


def test_a_request_while_the_url_is_taken_in_is_served(sim_factory: Any, node_factory: Any) -> None:
    # Pending for 2 s (no URL), then running at once: the sponsor first sees the URL with "running".
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, pending_s=2.0, initializing_s=0.0)
    # The endpoint's /health answers slowly: a sponsor that probed it before taking the URL in would
    # show the endpoint running without the URL all that time.
    sim.control("POST", "/_sim/faults", {"target": "endpoint:demo-user/gpu", "kind": "late", "path": "/health",
                                         "delay_s": LATE_S})
    node = start_sponsor(node_factory, sim, MINUTE_S, **SLOW_HF)
    create(node, "gpu", *L4, "--idle-pause-min", "0.1", "--wake-on-request", "on")  # idle after 6 s
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running" and r["eligible"])
    assert ask(node)
    assert hf_state(sim, "gpu") == "running"
    assert_nothing_billing(sim, node)


def test_a_request_before_hf_gives_the_url_waits_for_it(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, pending_s=LATE_S)  # HF gives the URL after pending
    node = start_sponsor(node_factory, sim, MINUTE_S)
    create(node, "gpu", *L4, "--idle-pause-min", "0.1", "--wake-on-request", "on")
    row = wait_show(node, "gpu", "pending", lambda r: r["provider_state"] == "pending")
    assert row["eligible"] is True and not row.get("url")  # starting, woken by a request: it may take one
    assert ask(node)
    assert hf_state(sim, "gpu") == "running"
    assert_nothing_billing(sim, node)
