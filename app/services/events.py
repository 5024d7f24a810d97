"""The event catalog: every fact a node tells, one dataclass per kind, and the bus that carries them.

Events are published and consumed by type (``bus.publish(PeerJoined(...))``; a subscriber
matches with ``isinstance``), one event per fact. The control API streams each event's JSON
form (``to_json()``: ``kind``, ``at`` and its fields, nothing else) to ``pairwise events``;
the tray renders each kind from its own table (``app/ui/notify.py``). The bus is Qt-free:
publishing never blocks, and a slow subscriber loses its oldest events rather than stalling
a request.

How to add a kind:

1. Add a ``@dataclass(frozen=True)`` subclass of ``Event`` below, in the section of its room,
   with ``kind: ClassVar[str] = "snake_case_name"`` (unique; it is the JSON ``kind``) and typed
   fields of JSON values only (str, int, float, bool, None, and lists or dicts of them). Name the
   node it is about ``node``; put the numbers a reader wants (minutes, dollars) in fields of their
   own rather than in a sentence.
2. Give it ``summary()``: one line a person reads (``pairwise events --text`` prints it).
3. Give the tray a rendering in ``app/ui/notify.py`` (``RENDERINGS``): a notification, or
   ``REFRESH_NODES`` / ``REFRESH_JOBS`` / ``QUIET`` when it only changes what views show.
   ``tests/unit/test_events.py`` fails until every kind has one.
4. Publish it where the fact happens: ``bus.publish(YourEvent(node=..., ...))``.

A provider's own events (its account signed in, say) live in its folder (``<provider>/events.py``) and join
this catalog the same way; generic events name no provider, and say "its provider" where one acts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

JobJson = dict[str, Any]  # a workload record as `pairwise jobs --json` prints it


@dataclass(frozen=True)
class Event:
    """Base of every kind; ``at`` is when the fact happened (Unix time)."""

    kind: ClassVar[str] = ""
    catalog: ClassVar[dict[str, type[Event]]] = {}
    at: float = field(default_factory=time.time, kw_only=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.kind or cls.kind in Event.catalog:
            raise TypeError(f"event {cls.__name__} needs a kind of its own (got {cls.kind!r})")
        Event.catalog[cls.kind] = cls

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "at": self.at}
        for f in fields(self):
            if f.name != "at":
                out[f.name] = getattr(self, f.name)
        return out

    def summary(self) -> str:
        return self.kind


def kinds() -> dict[str, type[Event]]:
    """Every kind in the catalog, by its JSON ``kind``."""
    return dict(Event.catalog)


def from_json(data: dict[str, Any]) -> Event | None:
    """The event a JSON line describes, or None for a kind this build does not know (a newer node)."""
    cls = Event.catalog.get(str(data.get("kind")))
    if cls is None:
        return None
    names = {f.name for f in fields(cls)}
    try:
        return cls(**{k: v for k, v in data.items() if k in names})
    except TypeError:
        return None


# -- the node ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeStarted(Event):
    kind: ClassVar[str] = "node_started"
    node: str
    address: str

    def summary(self) -> str:
        return f"{self.node} serving on {self.address}"


@dataclass(frozen=True)
class NodeStopped(Event):
    kind: ClassVar[str] = "node_stopped"
    node: str

    def summary(self) -> str:
        return f"{self.node} stopped"


@dataclass(frozen=True)
class NodeChanged(Event):
    """What a node list shows changed (an engine, a rented node, a peer's inventory, a setting)."""

    kind: ClassVar[str] = "node_changed"
    node: str
    reason: str
    node_id: str | None = None

    def summary(self) -> str:
        return f"{self.node}: {self.reason}"


@dataclass(frozen=True)
class Notice(Event):
    """Something a person should know that no other kind says (e.g. an endpoint open to anyone)."""

    kind: ClassVar[str] = "notice"
    title: str
    message: str
    level: str = "info"  # info | warning | error
    node: str | None = None

    def summary(self) -> str:
        return f"{self.title}: {self.message}"


# -- workloads -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkloadStarted(Event):
    kind: ClassVar[str] = "workload_started"
    job: JobJson

    def summary(self) -> str:
        return f"job {self.job.get('id')} for {self.job.get('model')} from {self.job.get('requester')}"


@dataclass(frozen=True)
class WorkloadRunning(Event):
    kind: ClassVar[str] = "workload_running"
    job: JobJson

    def summary(self) -> str:
        return f"job {self.job.get('id')} running on {self.job.get('serving_node')}"


@dataclass(frozen=True)
class WorkloadFinished(Event):
    kind: ClassVar[str] = "workload_finished"
    job: JobJson

    def summary(self) -> str:
        return f"job {self.job.get('id')} {self.job.get('state')}"


@dataclass(frozen=True)
class WorkloadUpdated(Event):
    """A job record learned something more (its cost), or a peer's copy of it arrived."""

    kind: ClassVar[str] = "workload_updated"
    job: JobJson
    source: str | None = None  # the node id the record came from

    def summary(self) -> str:
        return f"job {self.job.get('id')} updated"


# -- the cluster ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeerJoined(Event):
    """A paired peer answered: its models are routable here."""

    kind: ClassVar[str] = "peer_joined"
    node: str
    node_id: str
    address: str | None

    def summary(self) -> str:
        return f"{self.node} joined the cluster ({self.address})"


@dataclass(frozen=True)
class PeerLeft(Event):
    kind: ClassVar[str] = "peer_left"
    node: str
    node_id: str
    reason: str

    def summary(self) -> str:
        return f"{self.node} left the cluster: {self.reason}"


@dataclass(frozen=True)
class PeerRemoved(Event):
    """A peer's pin left the trust store (unpaired here or by it)."""

    kind: ClassVar[str] = "peer_removed"
    node: str
    node_id: str

    def summary(self) -> str:
        return f"{self.node} is no longer a peer"


@dataclass(frozen=True)
class PeerPaired(Event):
    kind: ClassVar[str] = "peer_paired"
    node: str
    node_id: str
    address: str | None
    role: str  # inviter | joiner

    def summary(self) -> str:
        return f"paired with {self.node} ({self.address}) as {self.role}"


@dataclass(frozen=True)
class PeerUnpaired(Event):
    kind: ClassVar[str] = "peer_unpaired"
    node: str
    node_id: str
    told: bool = False  # the peer was told (it stops trusting this node too)
    by_peer: bool = False  # the peer removed this node

    def summary(self) -> str:
        return f"{self.node} unpaired by the peer" if self.by_peer else f"unpaired {self.node}"


@dataclass(frozen=True)
class PairInviteOpened(Event):
    kind: ClassVar[str] = "pair_invite"
    address: str
    expires_at: str  # ISO 8601

    def summary(self) -> str:
        return f"pairing invite open on {self.address} until {self.expires_at}"


@dataclass(frozen=True)
class PairInviteEnded(Event):
    kind: ClassVar[str] = "pair_invite_ended"
    state: str  # used | expired | void | cancelled

    def summary(self) -> str:
        return f"pairing invite {self.state}"


@dataclass(frozen=True)
class PairInviteVoided(PairInviteEnded):
    """The invite ended because of too many wrong PINs (a PairInviteEnded with state "void"):
    the inviting user should know, and from where, to start another."""

    kind: ClassVar[str] = "pair_invite_voided"
    state: str = "void"
    voided_by: list[str] = field(default_factory=list)  # the addresses the wrong PINs came from

    def summary(self) -> str:
        return (f"pairing invite void: too many wrong PINs from {', '.join(self.voided_by) or 'an unknown address'}"
                "; start another with 'pairwise pair invite'")


@dataclass(frozen=True)
class PairWrongPin(Event):
    """A wrong PIN was tried against the open invite: the inviting user should see each one (from where,
    how many tries are left before the invite is voided), not only the void."""

    kind: ClassVar[str] = "pair_wrong_pin"
    source: str  # the address the wrong PIN came from
    tries_left: int
    expires_at: str  # ISO 8601: when the invite ends anyway

    def summary(self) -> str:
        return (f"a wrong PIN was tried from {self.source}: {self.tries_left} "
                f"{'try' if self.tries_left == 1 else 'tries'} left before the invite is voided")


# -- rented nodes and their money ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OffLanPrompt(Event):
    """A prompt that started here was sent to a rented node (off the LAN)."""

    kind: ClassVar[str] = "off_lan_prompt"
    job_id: str
    model: str
    rented_node: str
    requester: str  # who asked, as one line (``Requester.label``: "laptop · key ci-bot")
    serving_node: str | None = None
    origin_node: str | None = None

    def summary(self) -> str:
        return f"{self.requester} asked {self.model}; sent to {self.rented_node} (off-LAN)"


@dataclass(frozen=True)
class BudgetPaused(Event):
    """A rented node reached its budget cap: it is no longer routed to, and when its lifecycle is
    managed its endpoint is paused on the provider (``provider_pause``). Told once per reach: for an
    endpoint the provider pauses, only once the provider reports it paused (until then: ``PauseOwed``)."""

    kind: ClassVar[str] = "budget_paused"
    node: str
    reason: str
    spent_usd: float
    cap_usd: float
    period: str  # day | month
    provider_pause: bool

    def summary(self) -> str:
        return f"{self.node} paused: {self.reason}"


@dataclass(frozen=True)
class IdlePaused(Event):
    """A managed rented node had no workload for ``idle_minutes`` and is now paused on its provider."""

    kind: ClassVar[str] = "idle_paused"
    node: str
    idle_minutes: float

    def summary(self) -> str:
        return f"{self.node} paused: no workload for {self.idle_minutes:g} min"


@dataclass(frozen=True)
class ReconcilePaused(Event):
    """At start, a managed endpoint found running that a clean exit would have paused, now paused."""

    kind: ClassVar[str] = "reconcile_paused"
    node: str
    reason: str

    def summary(self) -> str:
        return f"{self.node} was left running and is now paused: {self.reason}"


@dataclass(frozen=True)
class PausingOnExit(Event):
    """The sponsor is stopping and pauses this rented node (pause on sponsor exit)."""

    kind: ClassVar[str] = "pausing_on_exit"
    node: str

    def summary(self) -> str:
        return f"pausing {self.node} before the sponsor stops"


@dataclass(frozen=True)
class Woke(Event):
    """A request woke a paused rented node."""

    kind: ClassVar[str] = "woke"
    node: str
    provider_state: str | None

    def summary(self) -> str:
        return f"waking {self.node} ({self.provider_state})"


@dataclass(frozen=True)
class RentedFailed(Event):
    kind: ClassVar[str] = "rented_failed"
    node: str
    provider_state: str | None  # the provider's state or a job's stage (ERROR)
    message: str
    last_lines: list[str] = field(default_factory=list)  # a batch job's last log lines, when it has them

    def summary(self) -> str:
        return f"{self.node} failed: {self.message}"


@dataclass(frozen=True)
class RentedDrifted(Event):
    """An endpoint changed (or was deleted) outside Pairwise: the node is blocked until reviewed."""

    kind: ClassVar[str] = "rented_drifted"
    node: str
    reason: str

    def summary(self) -> str:
        return f"{self.node}: {self.reason}"


@dataclass(frozen=True)
class WindowEnded(Event):
    """A batch window (a job rented for a fixed time) ended: completed, failed, canceled or out of time."""

    kind: ClassVar[str] = "window_ended"
    node: str
    stage: str
    message: str | None
    ended_by: str | None  # what Pairwise stopped it for, when it did

    def summary(self) -> str:
        return f"{self.node}: batch window ended ({self.stage})" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class WindowStopped(Event):
    """Pairwise canceled a batch window (cause: idle | budget | exit | start | user)."""

    kind: ClassVar[str] = "window_stopped"
    node: str
    cause: str
    reason: str
    job_id: str | None = None
    usd: float | None = None  # what an orphaned window found at start had cost

    def summary(self) -> str:
        return f"{self.node}: batch window cancelled on its provider ({self.cause}): {self.reason}"


# -- cost caps under faults (issue 13) -----------------------------------------------------------------------


@dataclass(frozen=True)
class PriceChanged(Event):
    """The provider's price of a rented endpoint's compute changed (a new price, or new hardware): charged
    from now at ``charged_per_hour`` (the higher of the declared and the provider's price)."""

    kind: ClassVar[str] = "price_changed"
    node: str
    endpoint: str
    compute: str
    old_price_per_hour: float
    price_per_hour: float
    charged_per_hour: float

    def summary(self) -> str:
        return (f"{self.node}: {self.endpoint} costs ${self.price_per_hour:g}/h on its provider (was "
                f"${self.old_price_per_hour:g}/h, {self.compute}); charged at ${self.charged_per_hour:g}/h from now")


@dataclass(frozen=True)
class PriceUnknown(Event):
    """The provider lists no price for the compute a rented endpoint runs on: the node is ineligible and, when
    managed, paused (``paused``), until a price is known."""

    kind: ClassVar[str] = "price_unknown"
    node: str
    endpoint: str
    compute: str
    reason: str
    paused: bool

    def summary(self) -> str:
        return f"{self.node}: {self.reason}" + ("; pausing it" if self.paused else "")


@dataclass(frozen=True)
class RentedPaused(Event):
    """A managed endpoint paused for a reason no other kind tells: ``why`` is price (unknown), detach
    (paused before it was detached) or logout (paused before the provider's token was forgotten)."""

    kind: ClassVar[str] = "rented_paused"
    node: str
    why: str
    detail: str

    def summary(self) -> str:
        return f"{self.node} paused ({self.why}): {self.detail}"


@dataclass(frozen=True)
class CapEnforced(Event):
    """A managed endpoint over its cap was resumed outside Pairwise (the provider's UI, another machine) and is
    being paused again: the cap holds whoever resumes it."""

    kind: ClassVar[str] = "cap_enforced"
    node: str
    endpoint: str
    provider_state: str
    reason: str

    def summary(self) -> str:
        return (f"{self.node}: {self.endpoint} was resumed outside Pairwise and is {self.provider_state} although "
                f"{self.reason}; pausing it again")


@dataclass(frozen=True)
class PauseOwed(Event):
    """A pause is owed to the provider and it has not reported the endpoint paused yet: told from the
    moment a pause the money owes is decided (a cap, an unknown price), for others once an attempt failed
    (no token, the provider refusing or down), and again every billed minute until it reports it paused
    (``BudgetPaused`` for a cap, ``OwedPauseTaken`` after a failure). The endpoint may be billing
    meanwhile: at ``price_per_hour`` since ``billing_since`` (wall clock, None: not seen billing);
    ``owed_since``: when the pause was decided; ``error``: why the last attempt failed ("" if none did)."""

    kind: ClassVar[str] = "pause_owed"
    node: str
    endpoint: str
    reason: str
    error: str
    price_per_hour: float | None
    owed_since: float = 0.0
    billing_since: float | None = None
    provider_state: str | None = None

    def summary(self) -> str:
        cost = f" at ${self.price_per_hour:g}/h" if self.price_per_hour else ""
        since = ""
        if self.billing_since:
            since = time.strftime(" (billing since %H:%M:%S UTC)", time.gmtime(self.billing_since))
        if not self.error:
            return (f"{self.node}: {self.endpoint} is being paused ({self.reason}); until its provider confirms it "
                    f"may still be billing{cost}{since}")
        return (f"{self.node}: {self.endpoint} should be paused ({self.reason}) but the pause could not be sent: "
                f"{self.error}. It may still be billing{cost}{since}; Pairwise keeps trying")


@dataclass(frozen=True)
class OwedPauseTaken(Event):
    """A pause that could not be sent before is taken at last: the endpoint no longer bills."""

    kind: ClassVar[str] = "owed_pause_taken"
    node: str
    endpoint: str

    def summary(self) -> str:
        return f"{self.node}: {self.endpoint} is paused at last; it no longer bills"


@dataclass(frozen=True)
class StillBilling(Event):
    """An endpoint that should have been paused (``when``: exit or detach) is still billing on its provider;
    ``final``: Pairwise stopped trying (the next start pauses it and charges the gap)."""

    kind: ClassVar[str] = "still_billing"
    node: str
    endpoint: str
    price_per_hour: float | None
    error: str
    when: str
    final: bool
    message: str

    def summary(self) -> str:
        return self.message


# -- requesters (keys, LAN door, per-requester caps) -------------------------------------------------------


@dataclass(frozen=True)
class RequesterLimited(Event):
    """A requester hit a cap or a rate on a rented node (told once per requester and day)."""

    kind: ClassVar[str] = "requester_limited"
    title: str
    message: str

    def summary(self) -> str:
        return self.message


@dataclass(frozen=True)
class RequestersChanged(Event):
    """Keys or the LAN door changed."""

    kind: ClassVar[str] = "requesters_changed"
    reason: str
    lan_on: bool
    keys: int
    text: str

    def summary(self) -> str:
        return f"{self.reason} ({self.text})"


# -- the bus -------------------------------------------------------------------------------------------------


class EventBus:
    def __init__(self, queue_size: int = 1000) -> None:
        self._queues: set[asyncio.Queue[Event]] = set()
        self._callbacks: list[Callable[[Event], None]] = []
        self._queue_size = queue_size

    def publish(self, event: Event) -> None:
        for callback in list(self._callbacks):
            callback(event)
        for queue in list(self._queues):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(event)

    def subscribe(self) -> asyncio.Queue[Event]:
        queue: asyncio.Queue[Event] = asyncio.Queue(self._queue_size)
        self._queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Event]) -> None:
        self._queues.discard(queue)

    def on(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback`` synchronously for every event; returns an unsubscribe function."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback)
