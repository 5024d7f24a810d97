"""Time that cannot jump: the wall clock of a billing sponsor process is moved +1 day, and -2 h across
midnight UTC (through PAIRWISE_CLOCK_SHIFT_FILE, the test's hand on the node's wall clock). HF's own
ledger ends within the cap + one billed minute, the account neither charges a phantom day nor forgets
the day's spend, and the jump is told as a notice."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.cost_support import L4_PRICE, assert_within_cap, billed, wait_billed
from tests.hf.support import L4, Events, create, show

MINUTE_S = 1.0
CAP = 0.06
ONE_MINUTE = L4_PRICE / 60.0


def _jump_notice(events: Events) -> dict[str, Any]:
    return wait_until(lambda: next((e for e in events.seen if e["kind"] == "notice"
                                    and e["title"] == "The system clock jumped"), None),
                      timeout=30, what="the clock jump told")  # type: ignore[no-any-return]


def _sponsor(node_factory: Any, sim: SimulatorThread, shift: Path, seconds: float) -> Any:
    shift.write_text(f"{seconds}\n")
    return start_sponsor(node_factory, sim, MINUTE_S, PAIRWISE_CLOCK_SHIFT_FILE=str(shift))


def test_wall_clock_one_day_forward_while_billing(sim_factory: Any, node_factory: Any, tmp_path: Path) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    shift = tmp_path / "shift"
    node = _sponsor(node_factory, sim, shift, 0)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", str(CAP))
    wait_billed(sim, 0.02)
    shift.write_text("86400\n")  # the clock is set a day ahead
    notice = _jump_notice(events)
    assert "forward by 1.0 days" in notice["message"] and notice["level"] == "warning"
    row = show(node, "gpu")
    # Nothing HF did not bill was charged: not a day's worth (before: $19.20 at once, a false budget pause).
    assert row["cost"]["day_usd"] <= billed(sim) + ONE_MINUTE + 1e-9, (row["cost"], billed(sim))
    events.wait("budget_paused", timeout=60)
    assert_within_cap(sim, CAP, L4_PRICE)
    row = show(node, "gpu")
    assert row["cost"]["day_usd"] >= CAP and row["cost"]["month_usd"] <= CAP + 2 * ONE_MINUTE, row["cost"]
    events.close()


def test_wall_clock_two_hours_back_across_midnight_while_billing(sim_factory: Any, node_factory: Any,
                                                                  tmp_path: Path) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    shift = tmp_path / "shift"
    now = time.time()
    # The node's wall clock starts 20 s after a UTC midnight; going back 2 h crosses it into the day before.
    node = _sponsor(node_factory, sim, shift, math.ceil(now / 86400) * 86400 + 20 - now)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", str(CAP))
    spent = wait_billed(sim, 0.03)
    shift.write_text(f"{float(shift.read_text()) - 7200}\n")
    notice = _jump_notice(events)
    assert "back by 2.0 h" in notice["message"]
    # The day's spend is not forgotten (before: the earlier day's key reset it to zero).
    row = show(node, "gpu")
    assert row["cost"]["day_usd"] >= spent - 1e-9, (row["cost"], spent)
    events.wait("budget_paused", timeout=60)
    assert_within_cap(sim, CAP, L4_PRICE)
    events.close()
