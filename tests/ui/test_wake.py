"""Wake from sleep: a timer that finds far more wall-clock time passed than it waited."""

from __future__ import annotations

from app.ui.wake import CHECK_MS, WakeWatcher


def test_a_long_gap_is_a_wake_and_a_late_timer_is_not(qapp: object) -> None:
    now = [1000.0]
    watcher = WakeWatcher(clock=lambda: now[0])
    woke: list[float] = []
    watcher.woke.connect(woke.append)
    watcher.start()
    now[0] += CHECK_MS / 1000.0 + 3  # a busy machine: a few seconds late
    watcher.check()
    assert woke == []
    now[0] += CHECK_MS / 1000.0 + 600  # ten minutes asleep
    watcher.check()
    assert len(woke) == 1 and 590 < woke[0] < 610
    watcher.stop()
