"""Desktop notifications from bus events: what to say (``NotificationPolicy``, plain data) and
saying it (``Notifier``, through the tray icon's ``showMessage``).

Off-LAN prompts are announced once per rented node per session, then summarised: further
prompts are counted and reported together at most once per ``summary_interval_s``, so a busy
afternoon on a rented GPU is one line, not a hundred popups.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.services.jobs.requester import requester_text

SUMMARY_INTERVAL_S = 60.0
DEDUPE_S = 60.0
ATTENTION_KINDS = frozenset({"rented_failed", "budget_paused", "rented_drifted", "reconcile_paused"})


@dataclass
class Notification:
    kind: str
    title: str
    message: str
    level: str = "info"  # info | warning | error
    node: str | None = None


def _node(data: dict[str, Any]) -> str:
    for key in ("rented_node", "node", "name", "peer"):
        if data.get(key):
            return str(data[key])
    return "a rented node"


def _peer(data: dict[str, Any]) -> str:
    return str(data.get("peer") or data.get("name") or data.get("node") or "a peer")


class NotificationPolicy:
    """Turns (kind, data) into zero or one Notification; keeps the per-session off-LAN memory."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.off_lan_seen: set[str] = set()
        self.off_lan_pending: Counter[str] = Counter()
        self._recent: dict[tuple[str, str], float] = {}

    def _fresh(self, node: str, topic: str) -> bool:
        """False when the same topic for the same node was announced within DEDUPE_S (two sources)."""
        now = self.clock()
        last = self._recent.get((node, topic))
        self._recent[(node, topic)] = now
        return last is None or now - last > DEDUPE_S

    def on_event(self, kind: str, data: dict[str, Any]) -> Notification | None:
        if kind == "off_lan_prompt":
            node = _node(data)
            if node in self.off_lan_seen:
                self.off_lan_pending[node] += 1
                return None
            self.off_lan_seen.add(node)
            model, who = data.get("model") or "a model", requester_text(data) if data.get("requester") else data.get("origin_node") or "an app"
            return Notification(kind, "A prompt left your LAN",
                                f"{who} asked {model}; it was sent to {node} (Rented · off-LAN). Further prompts "
                                "to it this session are summarised.", node=node)
        if kind == "budget_paused":
            node = _node(data)
            if not self._fresh(node, "budget"):
                return None
            reason = data.get("reason") or data.get("message") or "its budget cap was reached"
            return Notification(kind, f"{node} paused: budget reached", str(reason), "warning", node)
        if kind == "idle_paused":
            node = _node(data)
            minutes = data.get("idle_min") or data.get("idle_pause_min")
            idle = f"No requests for {minutes:g} min" if isinstance(minutes, int | float) else "No requests for a while"
            return Notification(kind, f"{node} paused while idle",
                                str(data.get("message") or f"{idle}; paused so it stops billing."), node=node)
        if kind == "woke":
            node = _node(data)
            return Notification(kind, f"Waking {node}",
                                str(data.get("message") or "A request needs it; it serves once it is running."),
                                node=node)
        if kind == "rented_failed":
            node = _node(data)
            message = data.get("message") or data.get("hf_message") or data.get("reason") or "no details given"
            return Notification(kind, f"{node} failed", str(message), "error", node)
        if kind == "rented_drifted":
            node = _node(data)
            return Notification(kind, f"{node} changed outside Pairwise", str(data.get("reason") or ""), "warning",
                                node)
        if kind == "reconcile_paused":
            node = _node(data)
            return Notification(kind, f"{node} was left running: paused",
                                str(data.get("reason") or "It was billing while Pairwise was not running."),
                                "warning", node)
        if kind == "peer_paired":
            return Notification(kind, f"Paired with {_peer(data)}", "It is now a member of your cluster.")
        if kind == "peer_joined":
            return Notification(kind, f"{_peer(data)} joined your cluster",
                                str(data.get("message") or "Its models are now available here."))
        if kind == "peer_left":
            return Notification(kind, f"{_peer(data)} left your cluster",
                                str(data.get("message") or "Its models are no longer available."))
        if kind == "notice":
            title, message = str(data.get("title") or "Pairwise"), str(data.get("message") or "")
            about = str(data["node"]) if data.get("node") else None
            if about and "budget reached" in title and not self._fresh(about, "budget"):
                return None
            return Notification(kind, title, message, str(data.get("level") or "info"), about)
        return None

    def summary(self) -> Notification | None:
        """The pending off-LAN prompts as one notification (and forget them)."""
        if not self.off_lan_pending:
            return None
        total = sum(self.off_lan_pending.values())
        parts = ", ".join(f"{n} ×{c}" for n, c in sorted(self.off_lan_pending.items()))
        self.off_lan_pending.clear()
        return Notification("off_lan_summary", f"{total} more prompt{'s' if total != 1 else ''} left your LAN",
                            f"Sent to rented nodes: {parts}.")


Sink = Callable[[Notification], None]


class Notifier(QObject):
    """Feeds events to the policy and shows what it returns. ``sent`` keeps every notification
    shown (the Jobs view and tests read it); ``attention`` is raised by failures and warnings."""

    notified = Signal(object)  # Notification
    attention_changed = Signal(bool)

    def __init__(self, sink: Sink | None = None, *, summary_interval_s: float = SUMMARY_INTERVAL_S,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.policy = NotificationPolicy()
        self.sink = sink
        self.sent: list[Notification] = []
        self.attention: list[Notification] = []
        self._timer = QTimer(self)
        self._timer.setInterval(int(summary_interval_s * 1000))
        self._timer.timeout.connect(self.flush_summary)

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        note = self.policy.on_event(kind, data)
        if note is None:
            if self.policy.off_lan_pending and not self._timer.isActive():
                self._timer.start()
            return
        self.show(note)

    def show(self, note: Notification) -> None:
        self.sent.append(note)
        if note.kind in ATTENTION_KINDS or note.level in ("warning", "error"):
            self.attention.append(note)
            self.attention_changed.emit(True)
        if self.sink is not None:
            self.sink(note)
        self.notified.emit(note)

    def flush_summary(self) -> None:
        self._timer.stop()
        note = self.policy.summary()
        if note is not None:
            self.show(note)

    def stop(self) -> None:
        self._timer.stop()

    def acknowledge(self) -> None:
        """The user looked (opened the window): attention is cleared."""
        if self.attention:
            self.attention.clear()
            self.attention_changed.emit(False)
