"""Cost caps under faults: each test drives a sponsor process against the simulated HF with a short billed
minute, does what an adversarial user (or bad luck) would, and compares HF's OWN ledger (the simulator's,
never Pairwise's meter) with the cap: ledger <= cap + one billed minute at the highest price seen."""

from __future__ import annotations

import signal
from typing import Any

import httpx

from app.harness import wait_until
from app.services.events import from_json
from app.simulator import SimulatorThread
from app.ui.notify import NotificationPolicy
from tests.hf.conftest import demo_login, start_sponsor
from tests.hf.cost_support import (
    A100_PRICE,
    L4_PRICE,
    assert_within_cap,
    billed,
    set_price,
    wait_billed,
    wait_hf_state,
)
from tests.hf.support import L4, MESSAGES, REPO, Events, create, hf_endpoint, show, wait_show

MINUTE_S = 1.0
# Tests that stop and start the sponsor: a node process takes seconds to start on a loaded machine, and
# the restart must come before the cap is crossed (while nobody watches, nothing can pause it).
SLOW_MINUTE_S = 2.0
ATTACH = ("--provider", "huggingface-endpoint", "--endpoint", "demo-user/gpu", "--managed", "on")
PAUSE_FAULT = {"target": "management", "kind": "500", "count": 100000, "path": "/pause"}


def sponsor(node_factory: Any, sim: SimulatorThread, name: str = "sponsor", minute_s: float = MINUTE_S,
            **env: str) -> Any:
    return start_sponsor(node_factory, sim, minute_s, name=name, **env)


def test_price_rise_on_hf_while_running(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    set_price(sim, "nvidia-l4", 0.6)
    node = sponsor(node_factory, sim)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.10")
    wait_billed(sim, 0.02)  # two minutes at $0.60/h
    set_price(sim, "nvidia-l4", 6.0)  # HF's price goes up tenfold while it runs
    changed = events.wait("price_changed", timeout=30)
    assert (changed["old_price_per_hour"], changed["price_per_hour"]) == (0.6, 6.0)
    assert events.wait("budget_paused", timeout=60)["node"] == "gpu"
    wait_hf_state(sim, "paused")
    assert_within_cap(sim, 0.10, 6.0)
    row = show(node, "gpu")
    assert row["provider_price_per_hour"] == 6.0 and row["price_per_hour"] == 6.0
    events.close()


def test_hardware_change_on_hf_is_repriced(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = sponsor(node_factory, sim)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.10")
    wait_billed(sim, 0.02)
    sim.control("POST", "/_sim/endpoints/demo-user/gpu/mutate", {"instanceType": "nvidia-a100"})  # L4 -> A100
    changed = events.wait("price_changed", timeout=30)
    assert changed["price_per_hour"] == A100_PRICE and "nvidia-a100" in changed["compute"]
    wait_show(node, "gpu", "rented show to follow the hardware", lambda r: "nvidia-a100" in (r["gpu"] or ""))
    events.wait("budget_paused", timeout=60)
    wait_hf_state(sim, "paused")
    assert_within_cap(sim, 0.10, A100_PRICE)
    events.close()


def test_unpriced_hardware_pauses_naming_why(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = sponsor(node_factory, sim)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", "1")
    wait_hf_state(sim, "running")
    set_price(sim, "nvidia-l4", None)  # HF no longer says what it costs
    unknown = events.wait("price_unknown", timeout=30)
    assert "Hugging Face lists no price for aws us-east-1 nvidia-l4 x1" in unknown["reason"]
    assert unknown["paused"] is True and unknown["compute"] == "aws us-east-1 nvidia-l4 x1"
    assert events.wait("rented_paused", timeout=30)["why"] == "price"
    wait_hf_state(sim, "paused")
    row = show(node, "gpu")
    assert row["state"] == "ineligible" and row["reason"].startswith("price unknown")
    refused = node.cli("rented", "resume", "gpu", check=False)
    assert refused.returncode == 1 and "price unknown" in refused.stderr
    events.close()


def test_sigkill_then_restart_after_minutes_then_resume(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=SLOW_MINUTE_S)
    node = sponsor(node_factory, sim, minute_s=SLOW_MINUTE_S)
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.10")
    wait_hf_state(sim, "running")
    node.kill()
    down = wait_billed(sim, 0.04)  # three minutes billed with nobody watching
    node.start()
    # Before anything else is decided, the minutes billed while it was down are charged.
    wait_show(node, "gpu", "the downtime charged", lambda r: r["cost"]["day_usd"] >= down - 1e-6, timeout=30)
    wait_hf_state(sim, "paused")  # left running while down, pause on exit on: paused at start
    resumed = node.cli("rented", "resume", "gpu", check=False)
    if resumed.returncode == 0:  # under the cap still: it runs until the cap pauses it
        wait_show(node, "gpu", "paused at the cap", lambda r: r["budget"] and r["provider_state"] == "paused"
                  and r["reason"] and "budget reached" in r["reason"], timeout=60)
    else:
        assert "budget reached" in resumed.stderr and "--budget-usd-per-day" in resumed.stderr, resumed.stderr
    wait_hf_state(sim, "paused")
    assert_within_cap(sim, 0.10, L4_PRICE)


def test_pause_on_exit_off_then_clean_restart(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=SLOW_MINUTE_S)
    node = sponsor(node_factory, sim, minute_s=SLOW_MINUTE_S)
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.10", "--pause-on-exit", "off")
    wait_hf_state(sim, "running")
    assert node.signal(signal.SIGTERM) == 0
    down = wait_billed(sim, 0.04)  # it bills on, as asked, while the sponsor is stopped
    node.start()
    wait_show(node, "gpu", "the time while stopped charged", lambda r: r["cost"]["day_usd"] >= down - 1e-6)
    wait_show(node, "gpu", "paused at the cap", lambda r: r["provider_state"] == "paused"
              and "budget reached" in (r["reason"] or ""), timeout=60)
    wait_hf_state(sim, "paused")
    assert_within_cap(sim, 0.10, L4_PRICE)


def test_resume_from_outside_while_over_the_cap(sim_factory: Any, node_factory: Any) -> None:
    # HF takes a while to schedule a replica (pending is not billed); the sponsor watches an endpoint
    # over its cap closely enough to pause it again before that ends.
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, pending_s=1.0)
    node = sponsor(node_factory, sim)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.06")
    events.wait("budget_paused", timeout=60)
    wait_hf_state(sim, "paused")
    for attempt in (1, 2):  # HF's UI, a script, a second machine: whoever resumes it
        sim.control("POST", "/_sim/endpoints/demo-user/gpu/resume")
        wait_until(lambda n=attempt: len([e for e in events.seen if e["kind"] == "cap_enforced"]) >= n,
                   timeout=30, what=f"the cap enforced again ({attempt})")
        wait_hf_state(sim, "paused")
    enforced = next(e for e in events.seen if e["kind"] == "cap_enforced")
    assert enforced["endpoint"] == "demo-user/gpu" and "budget reached" in enforced["reason"]
    assert_within_cap(sim, 0.06, L4_PRICE)
    refused = node.cli("rented", "resume", "gpu", check=False)
    assert refused.returncode == 1
    assert "budget reached" in refused.stderr and "pairwise rented set gpu --budget-usd-per-day" in refused.stderr
    events.close()


def test_two_sponsor_homes_share_one_account_of_the_endpoint(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    alpha = sponsor(node_factory, sim, "alpha")
    beta = sponsor(node_factory, sim, "beta")
    create(alpha, "gpu", *L4, "--budget-usd-per-day", "0.10")
    wait_billed(sim, 0.04)
    beta.cli("rented", "attach", "gpu", *ATTACH)
    beta.cli("rented", "set", "gpu", "--budget-usd-per-day", "0.10", "--wake-on-request", "on")
    row = show(beta, "gpu")
    assert row["spend_account"] == show(alpha, "gpu")["spend_account"]
    assert row["cost"]["day_usd"] >= 0.04  # what alpha spent counts on beta's side too
    assert "enforced by this sponsor (beta) for endpoint demo-user/gpu" in row["cap_note"]
    assert "days and months are UTC" in row["cap_note"]
    wait_hf_state(sim, "paused", timeout=60)
    wait_show(beta, "gpu", "over the cap on beta too", lambda r: "budget reached" in (r["reason"] or ""))
    refused = beta.cli("rented", "resume", "gpu", check=False)
    assert refused.returncode == 1 and "budget reached" in refused.stderr
    assert_within_cap(sim, 0.10, L4_PRICE)


def test_detach_pauses_first_and_reattach_keeps_the_spend(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = sponsor(node_factory, sim, PAIRWISE_HF_RETRIES="1")
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.20")
    wait_billed(sim, 0.04)
    sim.control("POST", "/_sim/faults", PAUSE_FAULT)
    refused = node.cli("rented", "detach", "gpu", check=False)
    assert refused.returncode == 1 and "refused to detach gpu" in refused.stderr
    assert "keeps billing on Hugging Face" in refused.stderr and "--yes" in refused.stderr
    sim.control("DELETE", "/_sim/faults")
    node.cli("rented", "detach", "gpu")
    wait_hf_state(sim, "paused", timeout=5)  # paused before the detach returned
    spent = billed(sim)
    node.cli("rented", "attach", "gpu", *ATTACH)
    node.cli("rented", "set", "gpu", "--budget-usd-per-day", "0.20")
    assert show(node, "gpu")["cost"]["day_usd"] >= spent - 1e-6  # the day goes on where it was
    node.cli("rented", "resume", "gpu")
    wait_show(node, "gpu", "paused at the cap", lambda r: r["provider_state"] == "paused"
              and "budget reached" in (r["reason"] or ""), timeout=60)
    wait_hf_state(sim, "paused")
    assert_within_cap(sim, 0.20, L4_PRICE)


def test_logout_pauses_billing_endpoints_and_tokens_are_read_when_sent(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = sponsor(node_factory, sim)
    create(node, "gpu", *L4, "--budget-usd-per-day", "1", "--wake-on-request", "on")
    wait_hf_state(sim, "running")
    node.cli("hf", "logout")
    wait_hf_state(sim, "paused", timeout=5)  # paused while the token could still send the pause
    # Signed out, nothing can wake it; signed in again, the same node (no restart) sends the new token.
    refused = httpx.post(f"{node.url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES}, timeout=60)
    assert refused.status_code >= 400
    demo_login(node, sim)
    served = httpx.post(f"{node.url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES}, timeout=60)
    assert served.status_code == 200, served.text
    wait_hf_state(sim, "running")
    sim.control("POST", "/_sim/faults", PAUSE_FAULT)
    refused_logout = node.cli("hf", "logout", check=False)
    assert refused_logout.returncode == 1 and "refused to sign out of Hugging Face" in refused_logout.stderr
    assert "gpu (demo-user/gpu" in refused_logout.stderr and "still billing" in refused_logout.stderr
    assert node.cli_json("hf", "status")["signed_in"] is True
    sim.control("DELETE", "/_sim/faults")
    node.cli("hf", "logout")
    wait_hf_state(sim, "paused", timeout=5)
    assert_within_cap(sim, 1.0, L4_PRICE)


def test_time_zone_change_between_runs(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = sponsor(node_factory, sim, TZ="Pacific/Kiritimati")  # UTC+14
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.06")
    spent = wait_billed(sim, 0.03)
    assert node.signal(signal.SIGTERM) == 0  # paused on exit
    node.env["TZ"] = "America/Los_Angeles"  # UTC-8 or -7: another local date most of the day
    node.start()
    assert show(node, "gpu")["cost"]["day_usd"] >= spent - 1e-6
    node.cli("rented", "resume", "gpu")
    wait_show(node, "gpu", "paused at the cap", lambda r: r["provider_state"] == "paused"
              and "budget reached" in (r["reason"] or ""), timeout=60)
    wait_hf_state(sim, "paused")
    assert_within_cap(sim, 0.06, L4_PRICE)


def test_cap_under_one_billed_minute_is_refused(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    set_price(sim, "nvidia-l4", 1.2)  # $0.02 a minute
    node = sponsor(node_factory, sim)
    refused = node.cli("rented", "create", "gpu", "--model", REPO, *L4, "--budget-usd-per-day", "0.01",
                       "--scale-to-zero-min", "600", "--yes", check=False)
    assert refused.returncode == 1
    assert "the cap of $0.01 per day is less than one billed minute ($0.0200 at $1.2/h" in refused.stderr
    assert hf_endpoint(sim, "gpu") is None  # nothing was created, nothing billed
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.5")
    wait_hf_state(sim, "running")
    node.cli("rented", "pause", "gpu")
    set_price(sim, "nvidia-l4", 60.0)  # now one minute ($1) is more than the whole cap
    refused = node.cli("rented", "resume", "gpu", check=False)
    assert refused.returncode == 1 and "less than one billed minute ($1.0000 at $60/h" in refused.stderr, refused.stderr
    assert "pairwise rented set gpu --budget-usd-per-day" in refused.stderr
    assert_within_cap(sim, 0.5, 60.0)


def test_a_pause_that_cannot_be_sent_is_announced_every_minute(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = sponsor(node_factory, sim)
    events = Events(node)
    sim.control("POST", "/_sim/faults", PAUSE_FAULT)  # HF refuses every pause
    create(node, "gpu", *L4, "--budget-usd-per-day", "0.03")
    wait_until(lambda: len([e for e in events.seen if e["kind"] == "pause_owed" and e["error"]]) >= 2, timeout=60,
               what="the owed pause announced twice after it failed")
    assert next(e for e in events.seen if e["kind"] == "pause_owed")["error"] == ""  # told when decided
    owed = next(e for e in events.seen if e["kind"] == "pause_owed" and e["error"])
    assert owed["node"] == "gpu" and owed["endpoint"] == "demo-user/gpu" and owed["price_per_hour"] == L4_PRICE
    assert "budget reached" in owed["reason"] and "500" in owed["error"]
    # What the tray shows for it (the same policy the tray's notifier runs).
    event = from_json(owed)
    assert event is not None
    shown = NotificationPolicy().on_event(event)
    assert shown is not None and shown.level == "error" and shown.title == "gpu: pause not sent"
    assert "may still be billing at $0.8/h" in shown.message
    sim.control("DELETE", "/_sim/faults")
    wait_hf_state(sim, "paused", timeout=30)
    events.wait("owed_pause_taken", timeout=10)
    events.close()
