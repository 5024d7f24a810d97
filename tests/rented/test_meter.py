"""The cost meter with a fake clock: hourly price × time, shared among concurrent workloads."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.services.rented.meter import CostMeter


class Clock:
    def __init__(self) -> None:
        self.now = time.mktime((2026, 10, 11, 12, 0, 0, 0, 0, -1))

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_one_workload_pays_price_times_time() -> None:
    clock = Clock()
    meter = CostMeter(clock=clock)
    meter.begin("l40s", "job1", 1.8)
    clock.advance(600)
    assert meter.end("job1") == pytest.approx(0.3)


def test_concurrent_workloads_share_the_hour() -> None:
    clock = Clock()
    meter = CostMeter(clock=clock)
    meter.begin("a100", "j1", 2.5)
    clock.advance(360)           # j1 alone: 0.25
    meter.begin("a100", "j2", 2.5)
    clock.advance(720)           # both: 0.5 shared, 0.25 each
    assert meter.end("j1") == pytest.approx(0.5)
    clock.advance(360)           # j2 alone: 0.25
    assert meter.end("j2") == pytest.approx(0.5)
    totals = meter.totals("a100")
    assert totals["session_usd"] == pytest.approx(1.0) and totals["day_usd"] == pytest.approx(1.0)
    # The whole busy stretch (1440 s at $2.50/h) is paid exactly once.
    assert totals["session_usd"] == pytest.approx(2.5 * 1440 / 3600)


def test_nodes_are_metered_apart_and_unknown_jobs_cost_nothing() -> None:
    clock = Clock()
    meter = CostMeter(clock=clock)
    meter.begin("a", "j1", 1.0)
    meter.begin("b", "j2", 3.0)
    clock.advance(3600)
    assert (meter.end("j1"), meter.end("j2"), meter.end("nope")) == (pytest.approx(1.0), pytest.approx(3.0), None)


def test_running_workloads_count_toward_totals() -> None:
    clock = Clock()
    meter = CostMeter(clock=clock)
    meter.begin("a", "j1", 3.6)
    clock.advance(100)
    assert meter.spent("a", "day") == pytest.approx(0.0)  # not accrued until someone looks
    assert meter.totals("a")["day_usd"] == pytest.approx(0.1)


def test_billed_time_and_workloads_are_not_double_counted() -> None:
    clock = Clock()
    meter = CostMeter(clock=clock)
    meter.begin("a", "j1", 1.0)
    clock.advance(1800)
    meter.end("j1")                 # 0.5 attributed to the workload
    meter.charge("a", 0.8)          # the provider billed 0.8 for the same stretch and idle minutes
    assert meter.spent("a", "day") == pytest.approx(0.8)
    assert meter.totals("a")["session_usd"] == pytest.approx(0.8)


def test_day_and_month_persist_and_roll_over(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "rented_meter.json"
    meter = CostMeter(path, clock=clock)
    meter.begin("a", "j1", 2.0)
    clock.advance(1800)
    meter.end("j1")
    again = CostMeter(path, clock=clock)   # a restart keeps today's and this month's totals
    assert again.spent("a", "day") == pytest.approx(1.0) and again.spent("a", "month") == pytest.approx(1.0)
    assert again.totals("a")["session_usd"] == 0
    clock.advance(86400)                   # tomorrow, same month
    assert again.spent("a", "day") == 0 and again.spent("a", "month") == pytest.approx(1.0)
    clock.advance(31 * 86400)              # next month
    assert again.spent("a", "month") == 0


def test_price_change_applies_from_then_on() -> None:
    clock = Clock()
    meter = CostMeter(clock=clock)
    meter.begin("a", "j1", 1.0)
    clock.advance(1800)
    meter.set_price("a", 3.0)
    clock.advance(1800)
    assert meter.end("j1") == pytest.approx(2.0)
