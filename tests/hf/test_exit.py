"""Pause on sponsor exit (SIGTERM, SIGINT), and reconcile at the next start after a SIGKILL."""

from __future__ import annotations

import signal
from typing import Any

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import L4, create, hf_state, show, wait_show

MINUTE_S = 0.2


def test_sigterm_and_sigint_leave_the_endpoint_paused(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    assert node.signal(signal.SIGTERM) == 0
    assert hf_state(sim, "gpu") == "paused"  # paused before the process ended
    node.start()
    assert show(node, "gpu")["name"] == "gpu"
    node.cli("rented", "resume", "gpu")
    wait_until(lambda: hf_state(sim, "gpu") == "running", what="resumed endpoint to run")
    assert node.signal(signal.SIGINT) == 0
    assert hf_state(sim, "gpu") == "paused"


def test_sigkill_then_next_start_pauses(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    node.kill()
    assert hf_state(sim, "gpu") == "running"  # nobody paused it: the sponsor died
    node.start()
    wait_until(lambda: hf_state(sim, "gpu") == "paused", what="the restarted sponsor to pause the endpoint")
    row = wait_show(node, "gpu", "paused on the node", lambda r: r["provider_state"] == "paused")
    assert row["state"] == "paused"
    log = (node.home / "logs" / "node.log").read_text()
    assert "left running while the sponsor was down" in log


def test_sigkill_then_a_start_while_hf_is_unreachable_still_pauses(sim_factory: Any, node_factory: Any) -> None:
    """The first look at HF after the restart fails (network not up yet); the decision waits for it."""
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S, PAIRWISE_HF_RETRIES="1")
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    node.kill()
    sim.control("POST", "/_sim/faults", {"target": "management", "kind": "500", "count": 6})
    node.start()
    log = node.home / "logs" / "node.log"
    # Read the log, not HF: a test call to HF would take the faults meant for the node.
    wait_until(lambda: "left running while the sponsor was down" in log.read_text(), timeout=30,
               what="the decision once HF answers")
    assert log.read_text().count("answered 500") >= 2  # the first looks at HF did fail
    wait_until(lambda: hf_state(sim, "gpu") == "paused", timeout=30, what="the endpoint paused")


def test_pause_on_exit_is_bounded_and_owed(sim_factory: Any, node_factory: Any) -> None:
    """HF not answering at exit: the node says which endpoint still bills and at what price, keeps trying
    to a longer bound, then stops; the next start pauses it and charges the gap."""
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S, PAIRWISE_HF_STOP_TIMEOUT_S="1", PAIRWISE_HF_TIMEOUT_S="0.3",
                         PAIRWISE_HF_EXIT_GIVE_UP_S="3")
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    sim.control("POST", "/_sim/faults", {"target": "management", "kind": "timeout", "count": 1000})
    assert node.signal(signal.SIGTERM) == 0
    sim.control("DELETE", "/_sim/faults")
    assert hf_state(sim, "gpu") == "running"
    printed = node.log.read_text()  # what `pairwise serve` printed
    assert "WARNING: endpoint demo-user/gpu (rented node gpu) is NOT paused and is still billing on Hugging " \
           "Face at $0.8/h" in printed and "still trying, for up to 3 s in all" in printed
    assert "gave up: the next start pauses it" in (node.home / "logs" / "node.log").read_text()
    node.start()
    wait_until(lambda: hf_state(sim, "gpu") == "paused", what="the owed pause at the next start")
    log = (node.home / "logs" / "node.log").read_text()
    assert "while nobody watched; charging the gap" in log
