"""The time money is counted on: wall-clock seconds that cannot jump while the node runs.

A rented GPU bills real minutes. The system's wall clock can be set forward or back at any moment
(by hand, by NTP after a long sleep, by a dying CMOS battery), and a meter that subtracted wall-clock
times would charge a day the provider never billed after a jump of +1 day, or forget a day's spend when the clock
went back across midnight. So while the node runs, billed time is counted on the awake clock
(``app.services.clock``: it counts sleep and never jumps), expressed as wall-clock seconds:

    steady() = the wall clock when the timebase was made + awake-clock seconds since

The wall clock is read only to anchor that (at start: the one bridge over a time the node did not
run, e.g. a stretch billed while the sponsor was down) and to notice a jump (``jumped``), which
the caller tells as a notice. Day and month keys are named from ``steady``, so a jump neither ends a
day nor brings an earlier one back; a restart anchors on the wall clock again, and the spend account
never lets a day key go backwards (spend.py).

``PAIRWISE_CLOCK_SHIFT_FILE`` (tests only): a file holding seconds added to the system's wall clock,
read at each look, so a test can move the wall clock of a running node process without touching
the machine's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from app.environment import environment
from app.services.clock import awake_clock

SHIFT_FILE_ENV = "PAIRWISE_CLOCK_SHIFT_FILE"
JUMP_S = 5.0  # wall minus steady moving by more than this is a jump, not drift or slewing


def _shift_of(path: str | None) -> float:
    if not path:
        return 0.0
    try:
        return float(Path(path).read_text(encoding="utf-8").strip() or 0.0)
    except (OSError, ValueError):
        return 0.0


def system_wall() -> float:
    """The wall clock as the system (or a test's shift file) has it."""
    return time.time() + _shift_of(environment().text(SHIFT_FILE_ENV))


class Timebase:
    def __init__(self, wall: Callable[[], float] = system_wall, awake: Callable[[], float] = awake_clock) -> None:
        self.wall, self.awake = wall, awake
        self._anchor = wall() - awake()
        self._told = 0.0  # the offset of wall from steady last told (0: none)

    def steady(self) -> float:
        return self._anchor + self.awake()

    def jumped(self) -> float | None:
        """Seconds the wall clock moved against ``steady`` since the last jump told, when that is more
        than ``JUMP_S`` (once per jump); else None."""
        offset = self.wall() - self.steady()
        if abs(offset - self._told) <= JUMP_S:
            return None
        moved, self._told = offset - self._told, offset
        return moved


_DEFAULT: Timebase | None = None


def timebase() -> Timebase:
    """The process's timebase, anchored the first time it is asked for (every meter shares it)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Timebase()
    return _DEFAULT


def steady() -> float:
    return timebase().steady()


def describe_jump(moved_s: float) -> str:
    sign = "forward" if moved_s > 0 else "back"
    size = abs(moved_s)
    amount = f"{size / 86400:.1f} days" if size >= 0.99 * 86400 else f"{size / 3600:.1f} h" if size >= 3600 \
        else f"{size:.0f} s"
    return (f"The system clock moved {sign} by {amount}. Rented time is counted on a clock that cannot jump, so "
            "nothing was charged or forgotten for it; days are named as before the jump until Pairwise restarts.")
