"""An owed pause goes out at once: against the simulated HF's own ledger (1-second billed minute), a cap
reached while HF's status GET hangs, or while HF answers 429 with a long Retry-After to every management
call, is paused within the cap + one billed minute (or, while HF refuses everything, within one billed
minute of HF answering again); `pause_owed` is told from the moment the pause is decided and every
billed minute after; `budget_paused` only once HF reports the endpoint paused."""

from __future__ import annotations

from typing import Any

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.cost_support import L4_PRICE, assert_within_cap, billed, wait_hf_state
from tests.hf.support import L4, Events, create, sim_state
from tests.support.patience import factor

MINUTE_S = 1.0
CAP = 0.05  # the fourth billed minute at $0.80/h crosses it


def _cap_after_setup() -> float:
    """A cap the fault is in place before: the fourth billed minute crosses it on an idle machine; a busy
    one (where the create and the look at HF take seconds each) gets as many more minutes as its waits."""
    minutes = 3.75 * factor()
    return round(L4_PRICE / 60.0 * minutes, 6)


def _budget_paused_when_hf_confirms(events: Events, sim: SimulatorThread) -> dict[str, Any]:
    """Wait for budget_paused and check HF already reports the endpoint paused when it is told."""
    event = wait_until(lambda: next((e for e in events.seen if e["kind"] == "budget_paused"), None), timeout=60,
                       interval=0.01, what="budget_paused")
    assert sim_state(sim, "gpu") == "paused", "budget_paused was told before HF paused anything"
    kinds = events.kinds()
    assert kinds.index("pause_owed") < kinds.index("budget_paused"), kinds
    return event  # type: ignore[no-any-return]


def _billing(sim_factory: Any, node_factory: Any, cap: float) -> tuple[SimulatorThread, Events]:
    """A sponsor whose capped endpoint runs on the simulated HF, and its event stream."""
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", str(cap))
    wait_hf_state(sim, "running")
    return sim, events


def _fault_before_the_cap(sim: SimulatorThread, events: Events, fault: dict[str, Any]) -> None:
    sim.control("POST", "/_sim/faults", fault)
    # What follows is about a cap reached while the fault holds: one reached before says so, not a timeout.
    assert "pause_owed" not in events.kinds() and sim_state(sim, "gpu") == "running", (
        f"the cap was reached before the fault was in place (set PAIRWISE_TEST_PATIENCE higher): {events.kinds()}")


def test_a_hanging_status_get_does_not_hold_up_the_pause(sim_factory: Any, node_factory: Any) -> None:
    cap = _cap_after_setup()
    sim, events = _billing(sim_factory, node_factory, cap)
    # Every status poll of the endpoint now hangs until the sponsor gives up on it; the pause (a POST)
    # would work. Before, the loop waited for the poll (up to 5 x 20 s) before sending the pause.
    _fault_before_the_cap(sim, events, {"target": "management", "kind": "timeout", "count": 100000,
                                        "path": "/endpoint/demo-user/gpu", "method": "GET"})
    owed = events.wait("pause_owed", timeout=60)
    assert owed["node"] == "gpu" and owed["endpoint"] == "demo-user/gpu" and owed["price_per_hour"] == L4_PRICE
    assert "budget reached" in owed["reason"] and owed["error"] == ""  # told when decided, not after a failure
    assert owed["owed_since"] > 0 and owed["billing_since"] is not None and owed["billing_since"] <= owed["owed_since"]
    reached = _budget_paused_when_hf_confirms(events, sim)
    assert reached["period"] == "day" and reached["cap_usd"] == cap
    assert_within_cap(sim, cap, L4_PRICE)
    sim.control("DELETE", "/_sim/faults")
    events.close()


def test_429_with_retry_after_on_every_call_pauses_within_a_minute_of_hf_answering(
        sim_factory: Any, node_factory: Any) -> None:
    sim, events = _billing(sim_factory, node_factory, _cap_after_setup())
    # HF rate-limits every management call and asks for 60 s each time.
    _fault_before_the_cap(sim, events, {"target": "management", "kind": "429", "count": 100000, "retry_after": 60})
    wait_until(lambda: len([e for e in events.seen if e["kind"] == "pause_owed" and "429" in e["error"]]) >= 2,
               timeout=60, what="the owed pause told every billed minute while HF refuses it")
    first = next(e for e in events.seen if e["kind"] == "pause_owed")
    assert first["error"] == ""  # told at once, before any attempt failed
    assert "budget_paused" not in events.kinds()  # nothing is paused yet: the tray must not say so
    assert sim_state(sim, "gpu") == "running"
    at_clear = billed(sim)
    sim.control("DELETE", "/_sim/faults")  # HF answers again
    _budget_paused_when_hf_confirms(events, sim)
    row = assert_within_cap(sim, 10.0, L4_PRICE)
    # Retry-After (60 s) was honoured only up to the next billed minute: one minute at most after HF answered.
    assert row["usd"] <= at_clear + L4_PRICE / 60.0 + 1e-9, (at_clear, row)
    events.close()


def test_one_429_on_the_pause_costs_no_more_than_the_minute_that_crossed_the_cap(
        sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    sponsor = start_sponsor(node_factory, sim, MINUTE_S)
    events = Events(sponsor)
    sim.control("POST", "/_sim/faults", {"target": "management", "kind": "429", "count": 1, "retry_after": 60,
                                         "path": "/pause"})
    create(sponsor, "gpu", *L4, "--budget-usd-per-day", str(CAP))
    _budget_paused_when_hf_confirms(events, sim)
    assert_within_cap(sim, CAP, L4_PRICE)
    events.close()
