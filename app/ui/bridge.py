"""From the node's Qt-free event bus to Qt signals (Vorta's app-wide signal bus, fed by the core).

``EventBus.on`` calls back synchronously on the loop's thread, which under qasync is Qt's main
thread, so the signals are delivered at once; a publish from another thread is queued by Qt.
Views never subscribe to the bus themselves: they connect to these signals and re-read snapshots.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from app.services.events import Event, EventBus
from app.ui.notify import rendering_of

COALESCE_MS = 100


class EventBridge(QObject):
    """``received`` carries every event but the job ones (three per request, on the request path:
    they only mark the views dirty, and ``jobs_changed`` follows once per ``COALESCE_MS``).
    Which views an event refreshes is its ``Rendering`` in ``app.ui.notify.RENDERINGS``."""

    received = Signal(object)  # the catalog's Event (not "event": that is QObject.event)
    jobs_changed = Signal()
    nodes_changed = Signal()

    def __init__(self, bus: EventBus, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs = QTimer(self)
        self._jobs.setSingleShot(True)
        self._jobs.setInterval(COALESCE_MS)
        self._jobs.timeout.connect(self._jobs_settled)
        self._unsubscribe = bus.on(self._on_event)

    def _on_event(self, event: Event) -> None:
        refresh = rendering_of(event).refresh
        if refresh == "jobs":
            if not self._jobs.isActive():
                self._jobs.start()
            return
        self.received.emit(event)
        if refresh == "nodes":
            self.nodes_changed.emit()

    def _jobs_settled(self) -> None:
        self.jobs_changed.emit()
        self.nodes_changed.emit()  # in-flight counts and costs, which the node list and tray show

    def close(self) -> None:
        self._jobs.stop()
        try:
            self._unsubscribe()
        except ValueError:
            pass  # already unsubscribed
