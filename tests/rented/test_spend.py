"""Spend accounts shared through one locked file: UTC periods, billing stretches charged once, old totals kept."""

from __future__ import annotations

import calendar
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.harness import REPO, child_env
from app.services.rented.meter import CostMeter
from app.services.rented.spend import SpendBook, period_keys, url_identity

NOON_UTC = calendar.timegm((2026, 10, 11, 12, 0, 0))
MINUTE = 60.0


class Clock:
    def __init__(self, now: float = NOON_UTC) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_two_books_on_one_file_charge_each_minute_of_a_stretch_once(tmp_path: Path) -> None:
    """Two sponsor processes watching one endpoint: the second joins the stretch the first opened."""
    clock = Clock()
    path = tmp_path / "spend.db"
    first, second = SpendBook(path, clock), SpendBook(path, clock)
    start = clock.now
    clock.now += 90  # minute 2 has started
    assert first.bill("ep", since=start, now=clock.now, minute_s=MINUTE, price_per_hour=0.6).usd == pytest.approx(0.02)
    # The second saw the stretch start later (it polls at other times): it charges nothing new.
    assert second.bill("ep", since=start + 30, now=clock.now, minute_s=MINUTE, price_per_hour=0.6).usd == 0
    clock.now += 60  # minute 3
    assert second.bill("ep", since=start + 30, now=clock.now, minute_s=MINUTE, price_per_hour=0.6).usd == pytest.approx(0.01)
    assert first.bill("ep", since=start, now=clock.now, minute_s=MINUTE, price_per_hour=0.6).usd == 0
    assert first.row("ep")["day_billed"] == pytest.approx(0.03) == second.row("ep")["day_billed"]


def test_a_price_rise_is_owed_since_the_old_price_was_last_seen(tmp_path: Path) -> None:
    clock = Clock()
    book = SpendBook(tmp_path / "spend.db", clock)
    start = clock.now

    def bill(at: float, price: float, seen: float) -> float:
        clock.now = start + at
        return book.bill("ep", since=start, now=clock.now, minute_s=MINUTE, price_per_hour=price,
                         price_seen_at=start + seen).usd

    assert bill(130, 0.6, seen=120) == pytest.approx(0.03)  # minutes at 0, 60, 120; $0.60/h seen at 120
    assert bill(190, 0.6, seen=120) == pytest.approx(0.01)  # minute at 180, at the price last seen
    # HF is seen asking $6/h at 200: the change happened after 120, so the minute begun at 180 owes
    # the difference too.
    assert bill(200, 6.0, seen=200) == pytest.approx((6.0 - 0.6) / 60)
    assert bill(245, 6.0, seen=200) == pytest.approx(0.1)  # the minute at 240, at the new price
    assert bill(250, 6.0, seen=250) == 0  # the same price seen again: nothing more
    assert book.row("ep")["day_billed"] == pytest.approx(0.04 + 5.4 / 60 + 0.1)


def test_a_closed_stretch_is_not_charged_again_by_a_stale_view(tmp_path: Path) -> None:
    clock = Clock()
    book = SpendBook(tmp_path / "spend.db", clock)
    start = clock.now
    clock.now += 30
    book.bill("ep", since=start, now=clock.now, minute_s=MINUTE, price_per_hour=0.6)
    clock.now += 10
    book.unbilled("ep", clock.now)
    assert book.stretch("ep") is None
    clock.now += 100  # a new stretch: charged from the close at the earliest, not from the old start
    billed = book.bill("ep", since=start, now=clock.now, minute_s=MINUTE, price_per_hour=0.6)
    assert billed.start == pytest.approx(start + 40) and billed.charged == 2


def test_days_and_months_are_utc_whatever_the_time_zone(tmp_path: Path) -> None:
    late_evening_utc = calendar.timegm((2026, 10, 31, 23, 30, 0))
    old = os.environ.get("TZ")
    try:
        for zone in ("UTC", "Pacific/Kiritimati", "America/Los_Angeles"):
            os.environ["TZ"] = zone
            time.tzset()
            assert period_keys(late_evening_utc) == ("2026-10-31", "2026-10")
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_meter_keys_spend_by_account_and_keeps_it_after_forget(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "spend.db"
    meter = CostMeter(path, clock=clock)
    meter.bind("gpu", "hf-endpoint:api/ns/ep")
    meter.charge("gpu", 0.05)
    meter.forget("gpu")  # detached
    again = CostMeter(path, clock=clock)  # another home, or a re-attach under another name
    again.bind("renamed", "hf-endpoint:api/ns/ep")
    assert again.spent("renamed", "day") == pytest.approx(0.05)
    assert again.totals("renamed")["account"] == "hf-endpoint:api/ns/ep"
    clock.now += 86400
    assert again.spent("renamed", "day") == 0 and again.spent("renamed", "month") == pytest.approx(0.05)


def test_old_per_name_totals_are_taken_into_the_account(tmp_path: Path) -> None:
    clock = Clock()
    legacy = tmp_path / "home" / "rented_meter.json"
    legacy.parent.mkdir()
    day, month = period_keys(clock.now)
    legacy.write_text(json.dumps({"gpu": {"day": day, "day_workloads": 0.0, "day_billed": 0.07,
                                          "month": month, "month_workloads": 0.0, "month_billed": 0.07}}))
    meter = CostMeter(tmp_path / "spend.db", clock=clock, legacy=legacy)
    meter.bind("gpu", "hf-endpoint:api/ns/ep")
    assert meter.spent("gpu", "day") == pytest.approx(0.07)
    assert not legacy.exists()


def test_url_identity_ignores_case_trailing_slash_and_default_port() -> None:
    assert url_identity("https://Example.COM/v1/") == url_identity("https://example.com:443/v1")


def test_an_ask_not_yet_answered_by_billing_survives_a_restart_and_ends_with_a_stretch_or_a_pause(
        tmp_path: Path) -> None:
    """A sponsor asked HF to bill (create/resume), saw it pending, and died: the next process reading the
    file learns billing may have begun from the last moment it was seen not billing, not from 'now'."""
    clock = Clock()
    path = tmp_path / "spend.db"
    first = SpendBook(path, clock)
    asked = clock.now
    first.asked("ep", asked)
    assert SpendBook(path, clock).open_ask("ep") == asked
    first.unbilled("ep", asked + 5)  # seen pending: not billed yet
    after_restart = SpendBook(path, clock)
    assert after_restart.open_ask("ep") == asked + 5
    clock.now += 200
    # HF bills: the stretch the new process opens starts at the ask, and answers it.
    billed = after_restart.bill("ep", since=after_restart.open_ask("ep") or 0, now=clock.now, minute_s=MINUTE,
                                price_per_hour=0.6)
    assert billed.start == asked + 5 and billed.charged == 4
    assert after_restart.open_ask("ep") is None
    after_restart.unbilled("ep", clock.now + 1)
    assert after_restart.open_ask("ep") is None  # an answered ask does not come back with the next pause
    after_restart.asked("ep", clock.now + 2)
    after_restart.asked("ep", None)  # the sponsor paused it before it billed: nothing is owed from the ask
    assert SpendBook(path, clock).open_ask("ep") is None


def test_two_processes_writing_one_account_lose_nothing(tmp_path: Path) -> None:
    """Concurrent writers: two processes each add 200 charges to one account at once (SQLite's locking)."""
    import subprocess
    import sys

    path = tmp_path / "spend.db"
    SpendBook(path).close()  # made once, so both processes open the same account
    script = ("import sys; from pathlib import Path; from app.services.rented.spend import SpendBook\n"
              "book = SpendBook(Path(sys.argv[1]))\n"
              "for _ in range(200): book.add({'ep': {'billed': 0.001}})\n"
              "assert book.problem is None, book.problem\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path)], env={**os.environ}) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert SpendBook(path).row("ep")["day_billed"] == pytest.approx(0.4)


def test_spend_json_is_migrated_once(tmp_path: Path) -> None:
    clock = Clock()
    day, month = period_keys(clock.now)
    legacy = tmp_path / "spend.json"
    legacy.write_text(json.dumps({"version": 1, "accounts": {"ep": {"day": day, "day_billed": 0.3, "month": month,
                                                                    "month_billed": 0.5}}}))
    book = SpendBook(tmp_path / "spend.db", clock)
    assert book.row("ep")["day_billed"] == 0.3 and book.row("ep")["month_billed"] == 0.5
    assert not legacy.exists() and (tmp_path / "spend.json.migrated").exists()


def test_a_deleted_account_is_told_apart_from_a_first_start(tmp_path: Path) -> None:
    clock, path, marker = Clock(), tmp_path / "spend" / "spend.db", tmp_path / "home" / "spend_account.json"
    marker.parent.mkdir()
    book = SpendBook(path, clock, marker=marker)
    book.add({"ep": {"billed": 0.2}})
    book.close()
    for name in ("spend.db", "spend.db-wal", "spend.db-shm"):
        (path.parent / name).unlink(missing_ok=True)
    again = SpendBook(path, clock, marker=marker)
    assert again.problem is not None and "is missing" in again.problem and str(path) in again.problem
    again.add({"ep": {"billed": 0.1}})  # counted in memory, nothing written
    assert not path.exists()
    moved = again.repair({"ep": 0.25})
    assert moved is None and again.problem is None and again.row("ep")["day_billed"] == 0.25
    assert SpendBook(path, clock, marker=marker).row("ep")["day_billed"] == 0.25


def test_a_damaged_account_keeps_its_last_figures(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "spend.db"
    book = SpendBook(path, clock)
    book.add({"ep": {"billed": 0.2}})
    with open(path, "r+b") as fh:
        fh.write(b"\x00" * 100)
    assert book.check() is not None and "damaged" in str(book.problem)
    assert book.row("ep")["day_billed"] == pytest.approx(0.2)  # never zero
    book.add({"ep": {"billed": 0.05}})
    assert book.row("ep")["day_billed"] == pytest.approx(0.25)
    moved = book.repair({"ep": 0.3})
    assert moved is not None and moved.exists() and book.row("ep")["day_billed"] == 0.3
    assert SpendBook(path, clock).problem is None


OTHER_SPONSOR = """
import sys
from pathlib import Path
from app.services.rented.spend import SpendBook
book = SpendBook(Path(sys.argv[1]))
book.add({"ep": {"billed": 0.25}})
print("open", flush=True)
sys.stdin.readline()
book.close()  # its node stops: the last connection, as far as its SQLite can tell, checkpoints and cleans up
"""


@pytest.mark.parametrize("checks", [1, 5])
def test_another_sponsor_stopping_leaves_this_ones_log_and_loses_no_charge(tmp_path: Path, checks: int) -> None:
    """Two nodes of one machine share the file; one stops while the other keeps charging. Looking at the file
    (every read and charge does) must not drop this process's SQLite locks, or the stopping node takes the
    write-ahead log away under the running one: its next charges vanish and the file is damaged."""
    path = tmp_path / "spend.db"
    book = SpendBook(path)
    book.add({"ep": {"billed": 1.0}})
    other = subprocess.Popen([sys.executable, "-c", OTHER_SPONSOR, str(path)], cwd=REPO, env=child_env(),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdin is not None
        assert other.stdout.readline().strip() == "open"
        for _ in range(checks):
            assert book.check() is None
        assert book.row("ep")["day_billed"] == pytest.approx(1.25)
        other.stdin.write("stop\n")
        other.stdin.flush()
        assert other.wait(60) == 0
    finally:
        if other.poll() is None:
            other.kill()
    assert Path(f"{path}-wal").exists()  # still in use here: nobody may clean it up
    book.add({"ep": {"billed": 2.0}})
    book.close()
    reader = sqlite3.connect(path)
    try:
        assert reader.execute("PRAGMA quick_check").fetchone() == ("ok",)
        (row,) = reader.execute("SELECT row FROM accounts WHERE account = 'ep'").fetchone()
    finally:
        reader.close()
    assert json.loads(row)["day_billed"] == pytest.approx(3.25)
