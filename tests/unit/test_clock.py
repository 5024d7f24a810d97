"""Billing and idle timers count the time a machine sleeps (a rented GPU bills through it)."""

from __future__ import annotations

import inspect
import sys
import time

import pytest

from app.services.clock import awake_clock
from app.services.hf.lifecycle import HfLifecycle


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CLOCK_BOOTTIME is Linux's")
def test_awake_clock_is_boottime_on_linux() -> None:
    before = time.clock_gettime(time.CLOCK_BOOTTIME)
    now = awake_clock()
    after = time.clock_gettime(time.CLOCK_BOOTTIME)
    assert before <= now <= after


def test_hf_lifecycle_measures_with_the_awake_clock() -> None:
    default = inspect.signature(HfLifecycle.__init__).parameters["clock"].default
    assert default is awake_clock
