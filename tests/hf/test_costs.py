"""Cost controls of a sponsor node process against the simulated HF: budget cap, idle pause, wake, cold start."""

from __future__ import annotations

import time
from typing import Any

import httpx
import openai

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import L4, MESSAGES, REPO, Events, create, hf_state, ledger_row, show, wait_show

PRICE = 0.8  # aws us-east-1 nvidia-l4 x1, per hour


def chat(node: Any, timeout: float = 30.0) -> httpx.Response:
    return httpx.post(f"{node.url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES}, timeout=timeout)


def test_budget_cap_pauses_within_one_billed_minute(sim_factory: Any, node_factory: Any) -> None:
    minute_s = 0.5
    sim: SimulatorThread = sim_factory(minute_s=minute_s, pending_s=0.2, initializing_s=0.4)
    node = start_sponsor(node_factory, sim, minute_s)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.10")
    paused = events.wait("budget_paused", timeout=30)
    assert paused["node"] == "gpu" and "budget reached" in paused["reason"]
    row = wait_show(node, "gpu", "paused at the cap", lambda r: r["provider_state"] == "paused")
    assert row["state"] == "ineligible" and row["eligible"] is False
    assert row["reason"].startswith("budget reached: $0.11 of $0.10 per day")
    assert hf_state(sim, "gpu") == "paused"
    billed = ledger_row(sim, "gpu")
    one_minute = PRICE / 60
    assert billed["usd"] <= 0.10 + one_minute + 1e-9, billed  # at most one billed minute past the cap
    assert billed["usd"] >= 0.10 - one_minute, billed  # and it did run up to the cap
    # The meter never runs behind HF's bill (which the ledger rounds to six places).
    assert row["cost_session_usd"] >= billed["usd"] - 1e-6
    refused = chat(node)
    assert refused.status_code == 403 and "budget reached" in refused.json()["error"]["message"]
    again = node.cli("rented", "resume", "gpu", check=False)
    assert again.returncode == 1 and "refused to resume gpu: budget reached" in again.stderr
    events.close()


def test_idle_pause_then_refusal_then_wake(sim_factory: Any, node_factory: Any) -> None:
    minute_s = 0.2
    sim: SimulatorThread = sim_factory(minute_s=minute_s)
    node = start_sponsor(node_factory, sim, minute_s)
    events = Events(node)
    # 3 s without a workload, counted from the create: room for the first chat on a loaded machine.
    create(node, "gpu", *L4, "--idle-pause-min", "0.05")
    wait_show(node, "gpu", "running", lambda r: r["state"] == "eligible")
    assert chat(node).status_code == 200
    idle = events.wait("idle_paused")
    assert idle["node"] == "gpu"
    row = wait_show(node, "gpu", "paused", lambda r: r["state"] == "paused")
    assert hf_state(sim, "gpu") == "paused"
    refused = chat(node)
    assert refused.status_code == 403
    message = refused.json()["error"]["message"]
    assert "gpu" in message and "paused" in message and "wake on request is off" in message, message
    node.cli("rented", "set", "gpu", "--wake-on-request", "on")
    assert show(node, "gpu")["eligible"] is True
    served = chat(node)
    assert served.status_code == 200 and served.headers["x-pairwise-off-lan"] == "gpu"
    assert events.wait("woke")["node"] == "gpu"
    assert hf_state(sim, "gpu") == "running"
    assert "wake on request is off" in row["reason"]
    events.close()


def test_cold_start_is_waited_out(sim_factory: Any, node_factory: Any) -> None:
    minute_s = 0.2
    sim: SimulatorThread = sim_factory(minute_s=minute_s)
    node = start_sponsor(node_factory, sim, minute_s)
    create(node, "gpu", *L4, "--cold-start-s", "20")
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    sim.control("POST", "/_sim/endpoints/demo-user/gpu/mutate", {"state": "scaledToZero"})
    row = wait_show(node, "gpu", "cold", lambda r: r["state"] == "cold")
    assert row["eligible"] is True and "cold start" in row["reason"]
    # Scale-up takes 2.5 s here: a stand-in for the minutes a real cold start takes, longer than the
    # 120 s a plain proxy would wait; the node's cold-start budget (20 s) is what counts.
    sim.control("POST", "/_sim/settings", {"initializing_s": 2.5})
    before = sim.control("GET", "/_sim/endpoints/demo-user/gpu/requests")["requests"]
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0, timeout=60)
    started = time.monotonic()
    answer = client.chat.completions.create(model=REPO, messages=MESSAGES)  # type: ignore[arg-type]
    assert answer.choices[0].message.content
    assert time.monotonic() - started >= 2.0
    # One request, held by HF's proxy (X-Scale-Up-Timeout) rather than refused and retried.
    assert sim.control("GET", "/_sim/endpoints/demo-user/gpu/requests")["requests"] == before + 1
    # With a budget shorter than the scale-up the same request is cut off, as the proxy's 120 s would.
    sim.control("POST", "/_sim/endpoints/demo-user/gpu/mutate", {"state": "scaledToZero"})
    node.cli("rented", "set", "gpu", "--cold-start-s", "1")
    wait_show(node, "gpu", "cold again", lambda r: r["state"] == "cold")
    cut = chat(node)
    assert cut.status_code == 502 and "gpu" in cut.json()["error"]["message"]
    wait_until(lambda: hf_state(sim, "gpu") == "running", timeout=10, what="the woken endpoint to run")
