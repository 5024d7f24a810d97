"""Wake from sleep, noticed the way Vorta does: a timer that should fire every few seconds finds
that far more wall-clock time has passed. A GPU bills while the laptop sleeps, so on wake the
tray asks the rented GPUs' providers at once instead of waiting for the next poll."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

CHECK_MS = 5000
SLEPT_AFTER_S = 30.0  # a late timer on a busy machine is seconds late; a sleep is minutes


class WakeWatcher(QObject):
    woke = Signal(float)  # seconds asleep

    def __init__(self, clock: Callable[[], float] = time.time, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.clock = clock
        self.last = clock()
        self.timer = QTimer(self)
        self.timer.setInterval(CHECK_MS)
        self.timer.timeout.connect(self.check)

    def start(self) -> None:
        self.last = self.clock()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def check(self) -> None:
        now = self.clock()
        gap = now - self.last - CHECK_MS / 1000.0
        self.last = now
        if gap > SLEPT_AFTER_S:
            self.woke.emit(gap)
