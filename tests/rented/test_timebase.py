"""The timebase money is counted on, and day keys that only move forward."""

from __future__ import annotations

from app.services.rented.spend import SpendBook
from app.services.rented.timebase import Timebase, describe_jump

DAY = 86400.0
MIDNIGHT = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC


def test_steady_follows_the_awake_clock_not_the_wall() -> None:
    wall, awake = [MIDNIGHT], [100.0]
    base = Timebase(wall=lambda: wall[0], awake=lambda: awake[0])
    awake[0] += 60
    wall[0] += 60 + DAY  # set a day ahead during that minute
    assert base.steady() == MIDNIGHT + 60
    moved = base.jumped()
    assert moved is not None and abs(moved - DAY) < 1e-6
    assert base.jumped() is None  # told once
    wall[0] -= DAY + 7200  # then set back two hours past where it was
    moved = base.jumped()
    assert moved is not None and abs(moved + DAY + 7200) < 1e-6
    assert "back by 1.1 days" in describe_jump(moved)
    wall[0] += 1.0  # a second of slewing is no jump
    assert base.jumped() is None


def test_a_day_key_never_goes_back() -> None:
    now = [MIDNIGHT + 60]  # 00:01 on 1 January
    book = SpendBook(None, clock=lambda: now[0])
    book.add({"a": {"billed": 0.5}})
    now[0] -= 7200  # 22:01 on 31 December: an earlier day
    assert book.row("a")["day_billed"] == 0.5 and book.row("a")["day"] == "2026-01-01"
    book.add({"a": {"billed": 0.25}})
    assert book.row("a")["day_billed"] == 0.75 and book.row("a")["month_billed"] == 0.75
    now[0] += 7200 + DAY  # the next day does start afresh
    assert book.row("a")["day_billed"] == 0.0 and book.row("a")["month_billed"] == 0.75
