"""Desktop notifications from bus events: what to say (``NotificationPolicy``, plain data) and
saying it (``Notifier``, through the tray icon's ``showMessage``).

Off-LAN prompts are announced once per rented node per session, then summarised: further
prompts are counted and reported together at most once per ``summary_interval_s``, so a busy
afternoon on a rented GPU is one line, not a hundred popups.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import QObject, QTimer, Signal

from app.services.api import glossary
from app.services.events import (
    BudgetPaused,
    CapEnforced,
    Event,
    IdlePaused,
    NodeChanged,
    NodeStarted,
    NodeStopped,
    Notice,
    OffLanPrompt,
    OwedPauseTaken,
    PairInviteEnded,
    PairInviteOpened,
    PairInviteVoided,
    PairWrongPin,
    PauseOwed,
    PausingOnExit,
    PeerJoined,
    PeerLeft,
    PeerPaired,
    PeerRemoved,
    PeerUnpaired,
    PriceChanged,
    PriceUnknown,
    ReconcilePaused,
    RentedDrifted,
    RentedFailed,
    RentedPaused,
    RequesterLimited,
    RequestersChanged,
    StillBilling,
    WindowEnded,
    WindowStopped,
    Woke,
    WorkloadFinished,
    WorkloadRunning,
    WorkloadStarted,
    WorkloadUpdated,
)

SUMMARY_INTERVAL_S = 60.0
ATTENTION_KINDS = frozenset({RentedFailed.kind, BudgetPaused.kind, RentedDrifted.kind, ReconcilePaused.kind})


@dataclass(frozen=True)
class Rendering:
    """How the tray shows one kind of event: which views re-read their snapshots after it, and
    whether ``NotificationPolicy`` turns it into a desktop notification."""

    refresh: Literal["jobs", "nodes", "none"]
    notifies: bool = False


REFRESH_JOBS = Rendering("jobs")  # three per request: coalesced by the bridge
REFRESH_NODES = Rendering("nodes")
QUIET = Rendering("none")  # the view that asked for it (pairing) reads the answer itself
NOTIFY = Rendering("nodes", notifies=True)
NOTIFY_ONLY = Rendering("none", notifies=True)

# Every kind in the event catalog, and how the tray renders it (tests/unit/test_events.py checks
# that none is missing and that ``notifies`` says what the policy does); a provider's own kinds are
# added by its registration (``add_renderings``).
RENDERINGS: dict[type[Event], Rendering] = {
    NodeStarted: REFRESH_NODES, NodeStopped: REFRESH_NODES, NodeChanged: REFRESH_NODES, Notice: NOTIFY_ONLY,
    WorkloadStarted: REFRESH_JOBS, WorkloadRunning: REFRESH_JOBS, WorkloadFinished: REFRESH_JOBS,
    WorkloadUpdated: REFRESH_JOBS,
    PeerJoined: NOTIFY, PeerLeft: NOTIFY, PeerRemoved: REFRESH_NODES, PeerPaired: NOTIFY, PeerUnpaired: REFRESH_NODES,
    PairInviteOpened: QUIET, PairInviteEnded: QUIET, PairInviteVoided: NOTIFY_ONLY,
    PairWrongPin: NOTIFY_ONLY,
    OffLanPrompt: NOTIFY_ONLY, BudgetPaused: NOTIFY, IdlePaused: NOTIFY, ReconcilePaused: NOTIFY, Woke: NOTIFY,
    RentedFailed: NOTIFY, RentedDrifted: NOTIFY, WindowEnded: REFRESH_NODES, WindowStopped: REFRESH_NODES,
    RequesterLimited: NOTIFY_ONLY, RequestersChanged: REFRESH_NODES,
    PriceChanged: NOTIFY, PriceUnknown: NOTIFY, RentedPaused: NOTIFY, CapEnforced: NOTIFY, PauseOwed: NOTIFY,
    OwedPauseTaken: NOTIFY, StillBilling: NOTIFY, PausingOnExit: QUIET,
}


def add_renderings(renderings: Mapping[type[Event], Rendering]) -> None:
    """A provider's own kinds, added when it registers (``app/ui/providers.py``)."""
    RENDERINGS.update(renderings)


def rendering_of(event: Event) -> Rendering:
    return RENDERINGS.get(type(event), REFRESH_NODES)


@dataclass
class Notification:
    kind: str
    title: str
    message: str
    level: str = "info"  # info | warning | error
    node: str | None = None


BUDGET_KINDS = frozenset({BudgetPaused.kind, CapEnforced.kind})
PAUSE_KINDS = frozenset({PauseOwed.kind, StillBilling.kind})


def cause_gone(note: Notification, rows: Mapping[str, Mapping[str, Any]]) -> bool:
    """Has what ``note`` warned about ended, by the live rows? Only a note about one rented node can
    tell; any other stays until the user looks."""
    if note.node is None:
        return False
    row = rows.get(note.node)
    if row is None:
        return note.kind in BUDGET_KINDS | PAUSE_KINDS | {RentedFailed.kind, RentedDrifted.kind}
    if note.kind in BUDGET_KINDS:
        return glossary.budget_period(row) is None
    if note.kind in PAUSE_KINDS:
        return not glossary.billing(row)
    if note.kind == RentedFailed.kind:
        return row.get("state") != "unhealthy"
    return False


def budget_message(reason: str, period: str = "day") -> str:
    """What a budget pause says: the cap, when it resets (UTC), and the way on."""
    return (f"{reason[0].upper()}{reason[1:]}. It can be used again at {glossary.resets_text(period)}, when the "
            f"{period}'s budget starts over. Click to raise the budget (or tray menu → Raise budget…).")


def tries_left_text(tries_left: int) -> str:
    return (f"{tries_left} {'try' if tries_left == 1 else 'tries'} left: after that the invite is voided and a "
            "new one is needed.")


def wrong_pin_text(source: str, tries_left: int, expires_at: str = "") -> str:
    """What the inviting machine says of a wrong PIN: from where, the tries left, and when the invite ends."""
    until = ""
    if expires_at:
        with contextlib.suppress(ValueError):
            until = f" It ends anyway at {dt.datetime.fromisoformat(expires_at).astimezone():%H:%M}."
    return (f"Someone at {source} typed a wrong PIN. {tries_left_text(tries_left)}{until} If that was not your "
            "other machine, cancel the invite.")


class NotificationPolicy:
    """Turns an event into zero or one Notification; keeps the per-session off-LAN memory."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.off_lan_seen: set[str] = set()
        self.off_lan_pending: Counter[str] = Counter()

    def on_event(self, event: Event) -> Notification | None:
        kind = event.kind
        match event:
            case OffLanPrompt(rented_node=node, model=model, requester=requester, origin_node=origin):
                if node in self.off_lan_seen:
                    self.off_lan_pending[node] += 1
                    return None
                self.off_lan_seen.add(node)
                who = requester or origin or "an app"
                return Notification(kind, "A prompt left your LAN",
                                    f"{who} asked {model or 'a model'}; it was sent to {node} (Rented · off-LAN). "
                                    "Further prompts to it this session are summarised.", node=node)
            case BudgetPaused(node=node, reason=reason, provider_pause=provider_pause, period=period):
                then = ("It is paused on its provider so it stops billing" if provider_pause
                        else "It is no longer routed to")
                return Notification(kind, f"{node} paused: over budget", f"{then}. {budget_message(reason, period)}",
                                    "warning", node)
            case IdlePaused(node=node, idle_minutes=minutes):
                return Notification(kind, f"{node} paused while idle",
                                    f"No requests for {minutes:g} min; paused so it stops billing.", node=node)
            case Woke(node=node):
                return Notification(kind, f"Waking {node}", "A request needs it; it serves once it is running.",
                                    node=node)
            case RentedFailed(node=node, message=message):
                return Notification(kind, f"{node} failed", message or "no details given", "error", node)
            case RentedDrifted(node=node, reason=reason):
                return Notification(kind, f"{node} changed outside Pairwise", reason, "warning", node)
            case ReconcilePaused(node=node, reason=reason):
                return Notification(kind, f"{node} was left running: paused",
                                    reason or "It was billing while Pairwise was not running.", "warning", node)
            case PairInviteVoided(voided_by=sources):
                return Notification(kind, "Pairing invite voided",
                                    f"Too many wrong PINs from {', '.join(sources) or 'an unknown address'}. "
                                    "Start a new invite to pair.", "warning")
            case PairWrongPin(source=source, tries_left=left, expires_at=expires):
                return Notification(kind, "Wrong PIN tried on your invite", wrong_pin_text(source, left, expires),
                                    "warning")
            case PeerPaired(node=node):
                return Notification(kind, f"Paired with {node}", "It is now a member of your cluster.")
            case PeerJoined(node=node):
                return Notification(kind, f"{node} joined your cluster", "Its models are now available here.")
            case PeerLeft(node=node, reason=reason):
                return Notification(kind, f"{node} left your cluster",
                                    f"Its models are no longer available ({reason}).")
            case RequesterLimited(title=title, message=message):
                return Notification(kind, title, message, "warning")
            case PriceChanged(node=node):
                return Notification(kind, f"{node}: price changed", event.summary(), "warning", node)
            case PriceUnknown(node=node):
                return Notification(kind, f"{node}: price unknown", event.summary(), "warning", node)
            case RentedPaused(node=node, detail=detail):
                return Notification(kind, f"{node} paused", detail, node=node)
            case CapEnforced(node=node):
                return Notification(kind, f"{node}: resumed over its cap", event.summary(), "warning", node)
            case PauseOwed(node=node):
                return Notification(kind, f"{node}: pause not sent", event.summary(), "error", node)
            case OwedPauseTaken(node=node):
                return Notification(kind, f"{node}: paused", event.summary(), node=node)
            case StillBilling(node=node, message=message):
                return Notification(kind, f"{node} is still billing", message, "error", node)
            case Notice(title=title, message=message, level=level, node=node):
                return Notification(kind, title, message, level, node)
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

    def on_event(self, event: Event) -> None:
        note = self.policy.on_event(event)
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

    def settle(self, rented: Sequence[Mapping[str, Any]]) -> None:
        """Drop each warning whose cause is gone by the live rows (a budget pause once the cap was raised,
        a failure once the node is healthy, anything about a node that is gone): the tray never shows a
        warning beside the state that ended it."""
        rows = {str(r.get("name")): r for r in rented}
        kept = [n for n in self.attention if not cause_gone(n, rows)]
        if len(kept) != len(self.attention):
            self.attention = kept
            self.attention_changed.emit(bool(kept))

    def acknowledge(self) -> None:
        """The user looked (opened the window): attention is cleared."""
        if self.attention:
            self.attention.clear()
            self.attention_changed.emit(False)
