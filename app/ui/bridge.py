"""From the node's Qt-free event bus to Qt signals (Vorta's app-wide signal bus, fed by the core).

``EventBus.on`` calls back synchronously on the loop's thread, which under qasync is Qt's main
thread, so the signals are delivered at once; a publish from another thread is queued by Qt.
Views never subscribe to the bus themselves: they connect to these signals and re-read snapshots.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.services.events import Event, EventBus

JOB_EVENTS = frozenset({"workload_started", "workload_running", "workload_finished", "workload_updated"})
NODE_EVENTS = frozenset({"node_changed", "node_started", "node_stopped", "peer_joined", "peer_left",
                         "budget_paused", "idle_paused", "woke", "rented_failed", "rented_drifted",
                         "reconcile_paused", "peer_paired", "peer_unpaired", "hf_signed_in", "hf_signed_out"})


COALESCE_MS = 100


class EventBridge(QObject):
    """``received`` carries every event but the job ones (three per request, on the request path:
    they only mark the views dirty, and ``jobs_changed`` follows once per ``COALESCE_MS``)."""

    received = Signal(str, object)  # kind, data (not "event": that is QObject.event)
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
        if event.kind in JOB_EVENTS:
            if not self._jobs.isActive():
                self._jobs.start()
            return
        data: dict[str, Any] = dict(event.data)
        data.setdefault("at", event.at)
        self.received.emit(event.kind, data)
        if event.kind in NODE_EVENTS:
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
