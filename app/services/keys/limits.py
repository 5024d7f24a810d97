"""Per-requester limits where the money is spent: daily spend caps and request rates on rented nodes.

Two kinds, both checked just before a rented candidate is asked (``gate``, one of the inference
service's gates), never for a LAN candidate, so local capacity is never limited by them:

- **per peer**, on this node's own rented nodes (``requesters`` in the rented declaration:
  ``usd_per_day`` and ``requests_per_min`` by the peer's node name or id, ``*`` for the rest);
- **per key** of this node (the key's own ``usd_per_day`` and ``requests_per_min``), over every
  rented node its requests reach, this node's or a peer's.

Spend is the ``cost_usd`` of finished workloads, counted per UTC day (the meter sets a cost when
a workload ends, so work still in flight is counted when it ends). At start it is rebuilt from the
job store: a peer's spend from the records of what this node's rented nodes served (written only
here: replication never takes a peer's version of them), a key's from this node's own jobs; records
replicated from peers about other nodes' work are never counted. Rates count requests admitted
to a rented node in the last 60 seconds. Over a limit, ``gate`` raises ``RequesterLimitError``:
the plan moves on, and when nothing else can serve the caller gets 429 (see ``inference``).
The first refusal of a limit in a UTC day tells the user once (a notice on the bus).

Public API: ``RequesterLimits(node_id, node_name, keys, bus, clock=time.time)``: ``gate(upstream,
caller)``, ``load(jobs)``, ``today(rented_name) -> [{"node_id", "requester", "usd"}]``,
``stop()``.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from app.services.backends.base import Caller, Upstream
from app.services.events import Event, EventBus, RequesterLimited, WorkloadFinished, WorkloadUpdated
from app.services.jobs.records import Workload
from app.services.jobs.store import JobStore
from app.services.keys.limit_text import rate_refusal, spend_refusal
from app.services.keys.store import KeyStore
from app.services.node_ids import rented_node_id
from app.services.rented.upstream import RentedUpstream

if TYPE_CHECKING:
    from app.services.api.snapshots import SpendTodayRow

log = logging.getLogger(__name__)

WINDOW_S = 60.0
DAY_S = 86400
THIS_MACHINE = "this machine"
LedgerKey = tuple[str, ...]


def utc_day(at: float) -> int:
    return int(at // DAY_S)


class RequesterLimits:
    def __init__(self, node_id: str, node_name: str, keys: KeyStore, bus: EventBus,
                 clock: Callable[[], float] = time.time) -> None:
        self.node_id, self.node_name, self.keys, self.bus, self.clock = node_id, node_name, keys, bus, clock
        self._jobs: dict[str, tuple[int, float, tuple[LedgerKey, ...]]] = {}  # job id -> (day, cost, counted under)
        self._totals: dict[tuple[int, LedgerKey], float] = {}
        self._names: dict[str, str] = {}  # requester node id -> its latest name
        self._windows: dict[LedgerKey, deque[float]] = {}
        self._told: set[tuple[int, str]] = set()
        self._unsubscribe = bus.on(self._on_event)

    def stop(self) -> None:
        self._unsubscribe()

    # -- the gate --------------------------------------------------------------------------------------------

    def gate(self, upstream: Upstream, caller: Caller) -> None:
        """Raise ``RequesterLimitError`` if ``caller`` may not use rented ``upstream`` now; else count it."""
        if upstream.kind != "rented":
            return
        who = caller.requester
        now = self.clock()
        day = utc_day(now)
        rates: list[LedgerKey] = []
        if who.key and who.node_id == self.node_id:
            record = self.keys.get(who.key)
            if record is not None:
                label, where = f"key {who.key}", "rented nodes"
                if record.usd_per_day is not None:
                    self._check_spend(day, ("key", who.key), label, record.usd_per_day, where, now)
                if record.requests_per_min:
                    rates.append(self._check_rate(("key", who.key), label, record.requests_per_min, where, now))
        if isinstance(upstream, RentedUpstream) and who.node_id != self.node_id:
            limits = upstream.decl.requesters
            cap = _for_peer(limits.usd_per_day, who.node_id, who.node_name)
            if cap is not None:
                self._check_spend(day, ("peer", upstream.name, who.node_id), who.node_name, cap, upstream.name, now)
            per_min = _for_peer(limits.requests_per_min, who.node_id, who.node_name)
            if per_min is not None:
                rates.append(self._check_rate(("peer", upstream.name, who.node_id), who.node_name, int(per_min),
                                              upstream.name, now))
        for key in rates:  # counted only once every limit let it through
            self._windows.setdefault(key, deque()).append(now)

    def _check_spend(self, day: int, key: LedgerKey, who: str, cap: float, where: str, now: float) -> None:
        spent = self._totals.get((day, key), 0.0)
        if spent < cap:
            return
        refusal = spend_refusal(who, cap, spent, where, _until_midnight(now))
        self._tell_once(day, key, f"{who} reached its ${cap:g}/day on {where}", refusal.message)
        raise refusal

    def _check_rate(self, key: LedgerKey, who: str, per_min: int, where: str, now: float) -> LedgerKey:
        window = self._windows.setdefault(key, deque())
        while window and window[0] <= now - WINDOW_S:
            window.popleft()
        if len(window) < per_min:
            return key
        retry = max(1, math.ceil(window[0] + WINDOW_S - now))
        refusal = rate_refusal(who, per_min, where, retry)
        self._tell_once(utc_day(now), key, f"{who} is over its {per_min} requests/min on {where}", refusal.message)
        raise refusal

    def _tell_once(self, day: int, key: LedgerKey, title: str, message: str) -> None:
        log.info("requester limit: %s", message)
        mark = (day, "/".join(key))
        if mark in self._told:
            return
        self._told = {m for m in self._told if m[0] == day}
        self._told.add(mark)
        self.bus.publish(RequesterLimited(title=title, message=message))

    # -- the ledger ------------------------------------------------------------------------------------------

    def load(self, jobs: JobStore) -> None:
        """Today's spend from the stored history (a restart keeps the caps). Work created since the
        day before yesterday (UTC) is read, so a job that ran past midnight is counted on the day it
        ended; ``count`` takes only what this node charged or its own keys spent."""
        for job in jobs.charged_since((utc_day(self.clock()) - 2) * DAY_S):
            self.count(job)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, WorkloadFinished | WorkloadUpdated):
            if isinstance(event, WorkloadUpdated) and event.source not in (None, self.node_id):
                return  # a peer's copy of a record: spend here is what this node's meter says, never a peer
            record = event.job
            if record.get("cost_usd"):
                try:
                    self.count(Workload.from_json(record))
                except (TypeError, ValueError) as exc:
                    log.debug("job record not counted: %s", exc)

    def count(self, job: Workload) -> None:
        """Count (or recount, replacing the last figure) a workload's cost under its requester."""
        if not job.cost_usd or not job.rented_node:
            return
        who = job.requester
        keys: list[LedgerKey] = []
        if job.serving_node_id == rented_node_id(self.node_id, job.rented_node):
            keys.append(("node", job.rented_node, who.node_id))
            if who.node_id != self.node_id:
                keys.append(("peer", job.rented_node, who.node_id))
        if who.key and who.node_id == self.node_id and job.origin_node_id == self.node_id:
            keys.append(("key", who.key))
        day = utc_day(job.finished_at or job.created_at)
        previous = self._jobs.pop(job.id, None)
        if previous is not None:
            for key in previous[2]:
                self._totals[(previous[0], key)] = self._totals.get((previous[0], key), 0.0) - previous[1]
        if not keys:
            return  # another node's work: neither its figures nor its names are this node's to keep
        self._names[who.node_id] = who.node_name
        for key in keys:
            self._totals[(day, key)] = self._totals.get((day, key), 0.0) + job.cost_usd
        self._jobs[job.id] = (day, job.cost_usd, tuple(keys))
        self._forget_old(utc_day(self.clock()))

    def _forget_old(self, day: int) -> None:
        if len(self._jobs) % 512 or not self._jobs:
            return
        self._jobs = {k: v for k, v in self._jobs.items() if v[0] >= day - 1}
        self._totals = {k: v for k, v in self._totals.items() if k[0] >= day - 1}

    def today(self, rented_name: str) -> list[SpendTodayRow]:
        """Spend on one of this node's rented nodes today, by requesting node, largest first."""
        day = utc_day(self.clock())
        rows: list[SpendTodayRow] = []
        for (at, key), usd in self._totals.items():
            if at == day and key[0] == "node" and key[1] == rented_name and usd > 0:
                node_id = key[2]
                name = THIS_MACHINE if node_id == self.node_id else self._names.get(node_id, node_id[:8])
                rows.append({"node_id": node_id, "requester": name, "usd": round(usd, 6)})
        return sorted(rows, key=lambda r: -r["usd"])

    def key_spend_today(self, name: str) -> float:
        return self._totals.get((utc_day(self.clock()), ("key", name)), 0.0)


_Limit = TypeVar("_Limit", float, int)


def _for_peer(limits: dict[str, _Limit], node_id: str, node_name: str) -> _Limit | None:
    for name in (node_id, node_name, "*"):
        if name in limits:
            return limits[name]
    return None


def _until_midnight(now: float) -> str:
    left = int(DAY_S - now % DAY_S)
    return f"in {left // 3600}h{left % 3600 // 60:02d}m"


def today_text(rows: list[SpendTodayRow]) -> str:
    """``today: laptop-b $1.20, this machine $0.30`` (the rented node detail's line)."""
    if not rows:
        return "today: no spend yet"
    return "today: " + ", ".join(f"{r['requester']} ${r['usd']:.2f}" for r in rows)
