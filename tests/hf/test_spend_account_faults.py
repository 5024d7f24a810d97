"""A missing, unreadable or damaged spend account never reads as zero: against the simulated HF's own
ledger (1-second billed minute), the account deleted, truncated, corrupted or made unwritable while a
capped endpoint bills, or before a start, leaves the endpoint paused, the rented node ineligible naming
the file and `pairwise spend repair`, `rented resume` refused, and HF's bill within the cap + one billed
minute; `pairwise spend repair` starts a new account and the node serves again."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.cost_support import L4_PRICE, assert_within_cap, billed, wait_billed, wait_hf_state
from tests.hf.support import L4, Events, create, show, wait_show

MINUTE_S = 1.0
SLOW_MINUTE_S = 2.0  # tests that restart the sponsor: a start takes seconds on a loaded machine
CAP = 0.08


def _db(tmp_path: Path) -> Path:
    return tmp_path / "spend" / "spend.db"


def _delete(db: Path) -> None:
    for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        path.unlink(missing_ok=True)


def _truncate(db: Path) -> None:
    os.truncate(db, os.path.getsize(db) // 2)


def _corrupt(db: Path) -> None:
    with open(db, "r+b") as fh:
        fh.write(b"\xde\xad\xbe\xef" * 64)


def _unwritable(db: Path) -> None:
    db.chmod(0o444)


FAULTS: dict[str, Callable[[Path], None]] = {"deleted": _delete, "truncated": _truncate, "corrupted": _corrupt,
                                             "unwritable": _unwritable}


def _told_unusable(events: Events, db: Path) -> dict[str, Any]:
    notice = wait_until(lambda: next((e for e in events.seen if e["kind"] == "notice"
                                      and e["title"] == "Spend account unusable"), None),
                        timeout=30, what="the unusable account told")
    assert str(db) in notice["message"] and "pairwise spend repair" in notice["message"], notice
    return notice  # type: ignore[no-any-return]


def _ineligible_naming_the_file(node: Any, db: Path) -> dict[str, Any]:
    row = wait_show(node, "gpu", "ineligible for the account", lambda r: r["state"] == "ineligible"
                    and "spend not counted" in (r["reason"] or ""), timeout=30)
    assert str(db) in row["reason"] and "pairwise spend repair" in row["reason"], row["reason"]
    assert row["spend_problem"] and str(db) in row["spend_problem"]
    shown = node.cli("rented", "show", "gpu")
    assert "spend not counted" in shown.stdout and "pairwise spend repair" in shown.stdout, shown.stdout
    refused = node.cli("rented", "resume", "gpu", check=False)
    assert refused.returncode == 1 and "pairwise spend repair" in refused.stderr, refused.stderr
    return row


def _repair_and_serve_again(node: Any, sim: SimulatorThread, db: Path) -> None:
    spent = billed(sim)  # what the user reads on HF's billing page
    repaired = node.cli("spend", "repair", "--accept-usd", f"{spent:.6f}")
    assert f"a new spend account was started at {db}" in repaired.stdout, repaired.stdout
    row = wait_show(node, "gpu", "eligible again", lambda r: not r.get("spend_problem")
                    and "spend not counted" not in (r["reason"] or ""), timeout=30)
    assert row["cost"]["day_usd"] >= spent - 1e-6, row["cost"]
    node.cli("rented", "resume", "gpu")  # allowed again (under the cap), and it bills again
    wait_billed(sim, spent + L4_PRICE / 60.0)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_account_damaged_while_billing(fault: str, sim_factory: Any, node_factory: Any, tmp_path: Path) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    events = Events(node)
    create(node, "gpu", *L4, "--budget-usd-per-day", str(CAP))
    spent = wait_billed(sim, 0.02)
    db = _db(tmp_path)
    assert db.exists()
    FAULTS[fault](db)
    _told_unusable(events, db)
    wait_hf_state(sim, "paused")  # what it cannot account for does not bill on
    row = _ineligible_naming_the_file(node, db)
    assert row["cost"]["day_usd"] >= spent - 1e-6, row["cost"]  # the last figures stand: never zero
    assert_within_cap(sim, CAP, L4_PRICE)
    _repair_and_serve_again(node, sim, db)
    events.wait("budget_paused", timeout=60)  # the cap still holds on the new account
    assert_within_cap(sim, CAP, L4_PRICE)
    events.close()


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_account_damaged_before_a_start(fault: str, sim_factory: Any, node_factory: Any, tmp_path: Path) -> None:
    sim: SimulatorThread = sim_factory(minute_s=SLOW_MINUTE_S)
    node = start_sponsor(node_factory, sim, SLOW_MINUTE_S)
    create(node, "gpu", *L4, "--budget-usd-per-day", str(CAP), "--pause-on-exit", "off")
    wait_billed(sim, 0.02)
    node.stop()  # it bills on while nobody watches, as asked
    db = _db(tmp_path)
    FAULTS[fault](db)
    node.start()
    wait_hf_state(sim, "paused", timeout=60)  # paused at start: no account, no billing
    _ineligible_naming_the_file(node, db)
    assert_within_cap(sim, CAP, L4_PRICE)
    assert show(node, "gpu")["provider_state"] == "paused"
