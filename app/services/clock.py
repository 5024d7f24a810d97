"""A monotonic clock that keeps counting while the machine sleeps.

A rented GPU keeps billing while the sponsor's laptop is asleep, so billed minutes,
budget caps and idle timers must count that time (the Vorta lesson: timers stay honest
across sleep). ``time.monotonic`` stops during suspend on Linux (CLOCK_MONOTONIC) and
on macOS (mach_absolute_time); CLOCK_BOOTTIME (Linux) and CLOCK_MONOTONIC through
clock_gettime (macOS) do not.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def _pick() -> Callable[[], float]:
    if sys.platform.startswith("linux") and hasattr(time, "CLOCK_BOOTTIME"):
        return lambda: time.clock_gettime(time.CLOCK_BOOTTIME)
    if sys.platform == "darwin" and hasattr(time, "CLOCK_MONOTONIC"):
        return lambda: time.clock_gettime(time.CLOCK_MONOTONIC)
    return time.monotonic


awake_clock: Callable[[], float] = _pick()
