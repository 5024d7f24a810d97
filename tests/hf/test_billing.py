"""Billed minutes from observed states (fake clock): never behind HF's per-started-minute bill."""

from __future__ import annotations

import pytest

from app.services.hf.billing import BilledMinutes


def test_a_stretch_starts_at_the_last_unbilled_sighting_and_charges_each_started_minute() -> None:
    meter = BilledMinutes(minute_s=60)
    meter.observe("pending", 100.0)
    assert meter.due(110.0) == 0 and meter.next_minute_in(110.0) is None
    meter.observe("initializing", 130.0)  # began somewhere in (100, 130]: assume 100
    assert meter.stretch_start == 100.0
    assert meter.due(130.0) == 1  # the first minute is charged as it starts
    assert meter.due(159.9) == 0
    assert meter.next_minute_in(159.9) == pytest.approx(0.1)
    meter.observe("running", 170.0)  # same stretch: initializing then running
    assert meter.due(160.0) == 1
    assert meter.due(399.0) == 3  # minutes 3, 4 and 5 began at 220, 280 and 340; the 6th begins at 400
    meter.observe("paused", 410.0)
    assert meter.due(1000.0) == 0 and not meter.billing
    meter.observe("running", 500.0)  # a new stretch, from the pause seen at 410
    assert meter.stretch_start == 410.0 and meter.due(500.0) == 2


def test_first_sighting_already_billed_starts_now() -> None:
    meter = BilledMinutes(minute_s=0.5)
    meter.observe("running", 10.0)
    assert meter.due(10.0) == 1
    assert meter.due(10.49) == 0
    assert meter.due(10.5) == 1
