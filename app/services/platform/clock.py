"""A monotonic clock that keeps counting while the machine sleeps.

A rented GPU keeps billing while the sponsor's laptop is asleep, so billed minutes, budget caps
and idle timers must count that time (the Vorta lesson: timers stay honest across sleep).

What ``time.monotonic`` does across sleep (suspend to RAM or hibernation):

| OS | ``time.monotonic`` is | across sleep | what we use |
| --- | --- | --- | --- |
| Linux | ``CLOCK_MONOTONIC`` | stops | ``CLOCK_BOOTTIME`` (counts suspend) |
| macOS | ``mach_absolute_time`` | stops | ``clock_gettime(CLOCK_MONOTONIC)``, which Apple documents as continuing while asleep (it is ``mach_continuous_time``) |
| Windows | ``GetTickCount64`` (Python <= 3.12), ``QueryPerformanceCounter`` (3.13+) | counts | ``time.monotonic`` itself |

The Windows rows are Microsoft's documentation (both counters include time in standby and
hibernation) and PEP 418; none of this can be observed here (no machine here sleeps), so
``tests/unit/test_platform_branches.py`` checks which source is picked on each OS.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable


def pick_awake_clock() -> Callable[[], float]:
    if sys.platform == "win32":
        return time.monotonic
    if sys.platform == "darwin":
        clock_id: int | None = time.CLOCK_MONOTONIC
    else:
        clock_id = getattr(time, "CLOCK_BOOTTIME", None)
    if clock_id is None:
        return time.monotonic  # another POSIX (BSD): its CLOCK_MONOTONIC is the best at hand
    return functools.partial(time.clock_gettime, clock_id)


awake_clock: Callable[[], float] = pick_awake_clock()
