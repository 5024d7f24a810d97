"""`JobLifecycle`: the sponsor's controller for batch windows (Hugging Face Jobs behind rented nodes).

A batch window has no pause and no scale-to-zero: once it is over, it is over. So:

- **States** from the Jobs API (never an inference call), mapped onto the rented node
  (``node.set_state_word``): SCHEDULING → starting; RUNNING → starting (LOADING) until the exposed
  port's ``/v1/models`` answers, then eligible; ERROR → unhealthy with HF's message (and the job's
  last log lines kept for the node's detail); COMPLETED / CANCELED / DELETED → ended with HF's message.
- **Billing** from the job's own ``startedAt``/``finishedAt`` as HF reports them: each started
  minute (at most the window's) is charged to the manager's meter as it starts, at the window's
  price (hardware + the exposed port's $0.01/h). The charged count is kept in ``hf_jobs.json``, so a
  restart charges only what was not charged yet. The loop wakes at each minute boundary, so a cap is
  crossed by at most the minute that crossed it.
- **Stopping** is a cancel: idle stop (``lifecycle.idle_pause_min`` without a workload once the
  model answers), a budget cap (``on_budget_reached``), the sponsor's exit, and a user's
  ``rented stop``. A cancel HF refuses or cannot take stays owed and is asked again until HF
  reports the job ended.
- **Reconcile at start** lists this sponsor's jobs by label: a job no rented node is watching (an
  orphan: a window whose node is gone, a duplicate) is canceled and what it billed is charged to
  the rented node its label names; a node's own job left running while the sponsor was down is
  canceled when pause-on-exit is on (what a clean exit would have done), the budget is spent, or
  it has been idle for longer than its idle stop.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from app.services.clock import awake_clock
from app.services.errors import CredentialError, PairwiseError
from app.services.events import EventBus, RentedFailed, WindowEnded, WindowStopped
from app.services.hf.client import HuggingFaceClient
from app.services.hf.errors import HfError, HfNotFound
from app.services.hf.jobs_models import LABEL_RENTED, LABEL_SPONSOR, TERMINAL, JobFlavor, JobInfo
from app.services.hf.jobs_records import JobRecord, JobRecords
from app.services.hf.service import HfService
from app.services.rented.controller import BaseController
from app.services.rented.decl import RentedDecl
from app.services.rented.manager import RentedManager
from app.services.rented.timebase import steady
from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)

LAST_LINES = 20


def is_hf_job(node: RentedUpstream) -> bool:
    return node.decl.provider == "huggingface-job"


def billed_minutes(record: JobRecord, now_wall: float, minute_s: float) -> int:
    """Minutes HF bills for the job so far: per started minute from its start, never past its window."""
    if record.started_at is None:
        return 0
    most = math.ceil(record.window_s / 60)
    if record.finished_at is not None:
        # round() absorbs float noise, so exactly two minutes does not become three.
        return min(most, math.ceil(round(max(0.0, record.finished_at - record.started_at) / minute_s, 6)))
    if record.stage in TERMINAL:
        return min(most, record.charged_minutes)  # ended without a finish time: nothing more is known
    return min(most, math.floor(max(0.0, now_wall - record.started_at) / minute_s) + 1)


def timed_out(record: JobRecord) -> bool:
    """HF ended the job at its timeout: the window's planned end (HF reports it as an ERROR)."""
    text = (record.message or "").lower()
    return record.stage == "ERROR" and ("timed out" in text or "timeout" in text)


@dataclass
class JobWatch:
    name: str
    last_activity: float  # monotonic
    ready: bool = False
    next_poll: float = 0.0
    stop_reason: str | None = None  # idle | budget | exit | start | user: a cancel still owed to HF
    stop_detail: str = ""
    next_stop_try: float = 0.0
    error: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    def busy(self) -> bool:
        return any(not t.done() for t in self.tasks)


class JobLifecycle(BaseController):
    what = "the batch-window lifecycle"

    def __init__(self, hf: HfService, manager: RentedManager, records: JobRecords, bus: EventBus, *,
                 clock: Callable[[], float] = awake_clock, wall: Callable[[], float] = steady) -> None:
        self.hf, self.manager, self.records, self.bus = hf, manager, records, bus
        self.tuning = hf.tuning
        self.clock, self.wall = clock, wall
        self.watches: dict[str, JobWatch] = {}
        super().__init__(log)
        manager.hooks.account_keys.append(self.account_key)
        # A window at its cap is cancelled, not paused: told as window_stopped (cause budget) once HF has
        # ended it, never as budget_paused.
        manager.hooks.confirms_pause.append(lambda node: node.decl.provider == "huggingface-job")

    # -- running (driven by the rented nodes' one loop: rented/provider_loop.py) ------------------------------------------------------

    def watched(self) -> list[JobWatch]:
        return list(self.watches.values())

    def sleep_s(self) -> float:
        now, soonest = self.clock(), (1.0 if self.watches else 30.0)
        for watch in self.watches.values():
            due = self.next_charge_in(watch.name)
            if due is not None:
                soonest = min(soonest, due)
            if not watch.busy():
                soonest = min(soonest, watch.next_poll - now)
                if watch.stop_reason:
                    soonest = min(soonest, watch.next_stop_try - now)
        return max(0.005, soonest)

    def tick(self) -> None:
        self.sync()
        now = self.clock()
        for watch in list(self.watches.values()):
            node, record = self.manager.nodes.get(watch.name), self.records.get(watch.name)
            if node is None or record is None:
                continue
            self.charge(watch.name, record)
            self._check_idle(watch, node, record, now)
            if watch.busy() or record.stage in TERMINAL:
                continue
            if watch.stop_reason and now >= watch.next_stop_try:
                self.spawn(watch, self._cancel(watch))
            elif now >= watch.next_poll:
                self.spawn(watch, self.poll(watch))

    def sync(self) -> None:
        current = {n.name for n in self.manager.nodes.values() if is_hf_job(n) and self.records.get(n.name)}
        for name in list(self.watches):
            if name not in current:
                for task in self.watches.pop(name).tasks:
                    task.cancel()
        for name in current:
            if name not in self.watches:
                self.watches[name] = JobWatch(name, last_activity=self.clock())
                record, node = self.records.get(name), self.manager.nodes.get(name)
                if record is not None and node is not None:  # what is known until HF is asked (an ended window)
                    node.set_state_word(self._word(record, ready=False), self._message(record))

    def watch_of(self, node: RentedUpstream) -> JobWatch | None:
        if not is_hf_job(node):
            return None
        self.sync()
        return self.watches.get(node.name)

    def _client(self, watch: JobWatch) -> HuggingFaceClient | None:
        try:
            return self.hf.client()
        except PairwiseError as exc:
            watch.error = exc.message
            return None

    # -- observing ---------------------------------------------------------------------------------------------

    async def poll(self, watch: JobWatch) -> None:
        record = self.records.get(watch.name)
        client = self._client(watch)
        if client is None or record is None:
            watch.next_poll = self.clock() + self.tuning.poll_steady_s
            return
        info = await self._ask(watch, record, client.get_job(record.namespace, record.job_id), "reading the job")
        if info is None:
            watch.next_poll = self.clock() + self.tuning.poll_starting_s
        else:
            await self.observe(watch, info)

    async def _ask(self, watch: JobWatch, record: JobRecord, call: Coroutine[Any, Any, JobInfo],
                   what: str) -> JobInfo | None:
        """One Jobs API call for ``watch``: the job as HF answered, or None (gone, or HF failed: said)."""
        try:
            return await call
        except HfNotFound:
            await self._gone(watch, record)
        except HfError as exc:
            watch.error = exc.message
            log.warning("rented node %s: %s: %s", watch.name, what, exc.message)
        return None

    async def observe(self, watch: JobWatch, info: JobInfo) -> None:
        """Take in the job as HF showed it."""
        record = self.records.get(watch.name)
        node = self.manager.nodes.get(watch.name)
        if record is None or record.job_id != info.id:
            return
        watch.error = None
        previous = (record.stage, watch.ready)
        record.stage, record.message = info.stage, info.message
        record.started_at = info.started_at or record.started_at
        record.finished_at = info.finished_at or record.finished_at
        if info.stage == "RUNNING" and not watch.ready and node is not None:
            watch.ready = await self._answers(node)
            if watch.ready:
                watch.last_activity = self.clock()  # the idle stop counts from when the model answers
        starting = info.stage == "SCHEDULING" or (info.stage == "RUNNING" and not watch.ready)
        watch.next_poll = self.clock() + (self.tuning.poll_starting_s if starting else self.tuning.poll_steady_s)
        if info.ended:
            watch.stop_reason = None
            if info.stage == "ERROR" and not timed_out(record) and not record.last_lines:
                record.last_lines = await self._last_lines(record)
        self.records.save()
        self.charge(watch.name, record)
        if node is None:
            return
        node.simulated = node.simulated or self.hf.client().simulated
        word = self._word(record, watch.ready)
        node.set_state_word(word, self._message(record))
        if (record.stage, watch.ready) != previous:
            self.manager.changed(f"rented node {watch.name} is {word} on Hugging Face")
            if info.ended:
                self._ended(watch, record)

    @staticmethod
    def _word(record: JobRecord, ready: bool) -> str:
        """The node's hf_state: HF's stage, but LOADING until the port answers, TIMED_OUT at the window's end."""
        if timed_out(record):
            return "TIMED_OUT"  # HF reports ERROR; for a batch window its end is the plan, not a failure
        return "LOADING" if record.stage == "RUNNING" and not ready else record.stage

    def _message(self, record: JobRecord) -> str | None:
        if record.stage not in TERMINAL:
            return record.message
        why = f"stopped by Pairwise ({record.ended_by})" if record.ended_by else None
        if timed_out(record):
            why = "the window's time is up"
        text = "; ".join(p for p in (record.message, why) if p)
        return f"the batch window ended ({record.stage}): {text}" if text else \
            f"the batch window ended ({record.stage})"

    def _ended(self, watch: JobWatch, record: JobRecord) -> None:
        log.info("rented node %s: job %s ended %s: %s", watch.name, record.job_id, record.stage, record.message)
        if record.stage == "ERROR" and not timed_out(record):
            self.bus.publish(RentedFailed(node=watch.name, provider_state=record.stage, message=record.message or "",
                                          last_lines=list(record.last_lines)))
        self.bus.publish(WindowEnded(node=watch.name, stage=record.stage, message=record.message,
                                     ended_by=record.ended_by))

    async def _answers(self, node: RentedUpstream) -> bool:
        result = await node.probe()
        return result.models is not None and not result.error and not result.credential_error

    async def _last_lines(self, record: JobRecord) -> list[str]:
        lines: list[str] = []
        try:
            async for _, text in self.hf.client().job_logs(record.namespace, record.job_id, tail=LAST_LINES,
                                                           idle_s=2.0):
                lines.append(text)
        except PairwiseError as exc:
            log.warning("could not read the logs of job %s: %s", record.job_id, exc.message)
        return lines[-LAST_LINES:]

    async def _gone(self, watch: JobWatch, record: JobRecord) -> None:
        record.stage, record.message = "DELETED", "the job is gone on Hugging Face"
        watch.stop_reason = None  # nothing left to cancel
        self.records.save()
        node = self.manager.nodes.get(watch.name)
        if node is not None:
            node.set_state_word("DELETED", self._message(record))
            self.manager.changed(f"rented node {watch.name}: job gone on Hugging Face")
        self._ended(watch, record)

    # -- billing and idle --------------------------------------------------------------------------------------

    def account_of(self, namespace: str, name: str) -> str:
        """The spend account of rented node ``name``'s windows: HF's API host, the namespace and the node's
        name (every window is a new job id, so one day's cap covers all of the node's windows)."""
        return f"hf-job:{urlsplit(self.hf.urls.hub).netloc}/{namespace}/{name}"

    def account_key(self, decl: RentedDecl) -> str | None:
        """For the manager's ``account_keys``: a batch window's account (None: not a window Pairwise started)."""
        record = self.records.get(decl.name) if decl.provider == "huggingface-job" else None
        return self.account_of(record.namespace, decl.name) if record is not None else None

    def next_charge_in(self, name: str) -> float | None:
        """Seconds until the next minute of ``name``'s window starts on HF's clock (when it is charged);
        None when the window does not bill."""
        record = self.records.get(name)
        if record is None or record.started_at is None or record.stage in TERMINAL:
            return None
        elapsed, minute = self.wall() - record.started_at, self.tuning.billing_minute_s
        return minute - (elapsed % minute) + 0.001

    def charge_due(self, name: str) -> None:
        """Charge what ``name``'s window has billed by now on the money clock, whenever the loop last ran: a
        budget read between two ticks (a loaded machine runs them late) sees every minute already started."""
        record = self.records.get(name)
        if record is not None:
            self.charge(name, record)

    def charge(self, name: str, record: JobRecord) -> None:
        due = billed_minutes(record, self.wall(), self.tuning.billing_minute_s) - record.charged_minutes
        if due <= 0:
            return
        record.charged_minutes += due
        usd = due * record.price_per_hour / 60.0
        if name in self.manager.nodes:
            self.manager.charge(name, usd)
        else:  # an orphan's minutes still belong to its rented node's account
            self.manager.meter.bind(name, self.account_of(record.namespace, name))
            self.manager.meter.charge(name, usd)
        self.records.save()

    def _check_idle(self, watch: JobWatch, node: RentedUpstream, record: JobRecord, now: float) -> None:
        life = node.decl.lifecycle
        if life.idle_pause_min is None or watch.stop_reason or not watch.ready or record.stage in TERMINAL:
            return
        if node.in_flight or node.waking:
            return
        if now - watch.last_activity >= life.idle_pause_min * 60.0:
            self.request_stop(watch, "idle", f"no workload for {life.idle_pause_min:g} min")

    def touch(self, watch: JobWatch) -> None:
        watch.last_activity = self.clock()
        if watch.stop_reason == "idle":
            watch.stop_reason = None  # work arrived before the idle stop was sent

    # -- stopping ----------------------------------------------------------------------------------------------

    def request_stop(self, watch: JobWatch, reason: str, detail: str = "") -> None:
        """Owe HF a cancel; the loop keeps asking until HF reports the job ended."""
        if watch.stop_reason in ("budget", "start", "exit", "user") and reason == "idle":
            return
        watch.stop_reason, watch.stop_detail, watch.next_stop_try = reason, detail, 0.0
        self.kick()

    async def _cancel(self, watch: JobWatch) -> None:
        record = self.records.get(watch.name)
        client = self._client(watch)
        if client is None or record is None:
            watch.next_stop_try = self.clock() + self.tuning.poll_steady_s
            return
        async with watch.lock:
            reason, detail = watch.stop_reason, watch.stop_detail
            if reason is None:
                return
            info = await self._ask(watch, record, client.cancel_job(record.namespace, record.job_id),
                                   f"cancel owed to HF ({detail or reason})")
            if info is None:
                watch.next_stop_try = self.clock() + self.tuning.poll_starting_s
                return
            if info.ended and record.ended_by is None:
                record.ended_by = detail or reason
            await self.observe(watch, info)
            if info.ended:
                log.info("rented node %s: job %s canceled (%s)", watch.name, record.job_id, detail or reason)
                # cause: idle | budget | exit | start | user
                self.bus.publish(WindowStopped(node=watch.name, cause=reason, reason=detail or reason))
                self.manager.budget_pause_confirmed(watch.name)  # the cap's stop is told by WindowStopped

    async def stop_now(self, node: RentedUpstream, reason: str, detail: str = "") -> None:
        """Cancel at once (exit, a user's stop); raises HfError if HF will not."""
        watch = self.watch_of(node)
        record = self.records.get(node.name)
        if watch is None or record is None:
            raise PairwiseError(f"rented node {node.name} is not a batch window", title="Not a batch window")
        if record.stage in TERMINAL:
            return
        watch.stop_reason, watch.stop_detail = reason, detail
        await self._cancel(watch)
        if watch.stop_reason is not None and watch.error:
            raise HfError(watch.error)

    def drop_watch(self, name: str) -> None:
        """Stop watching ``name`` (a new window starts afresh: not ready, nothing owed)."""
        watch = self.watches.pop(name, None)
        if watch is not None:
            for task in watch.tasks:
                task.cancel()

    def forget(self, name: str) -> None:
        self.drop_watch(name)
        self.records.forget(name)

    # -- reconcile at start ------------------------------------------------------------------------------------

    async def reconcile(self) -> None:
        """Find this sponsor's jobs by label; cancel orphans and jobs a clean exit would have stopped."""
        if not self.hf.signed_in and not self.records.names():
            return
        self.spawn_other(self._reconcile(), "hf-jobs-reconcile")

    async def _reconcile(self) -> None:
        while True:
            try:
                await self._reconcile_once()
                return
            except CredentialError as exc:  # signed out: nothing can be asked until a sign-in
                log.warning("reconciling batch windows: %s; asking again after a sign-in", exc.message)
                await asyncio.sleep(self.tuning.poll_steady_s)
            except PairwiseError as exc:
                # HF not answering yet (the network comes up after us): a job left running bills
                # until this is decided, so keep asking.
                log.warning("reconciling batch windows: %s; asking again", exc.message)
                await asyncio.sleep(self.tuning.poll_starting_s)

    async def _reconcile_once(self) -> None:
        client = self.hf.client()
        namespaces = {r.namespace for name in self.records.names() if (r := self.records.get(name))}
        namespaces.add(await client.default_namespace())
        for namespace in sorted(namespaces):
            for info in await client.list_jobs(namespace, {LABEL_SPONSOR: self.manager.sponsor_id}):
                if not info.ended:
                    await self._reconcile_job(client, info)

    async def _reconcile_job(self, client: HuggingFaceClient, info: JobInfo) -> None:
        name = info.labels.get(LABEL_RENTED, "")
        record, node = self.records.get(name), self.manager.nodes.get(name)
        if record is None or record.job_id != info.id or node is None:
            await self.cancel_orphan(client, info, name)
            return
        watch = self.watch_of(node)
        if watch is None:
            return
        await self.observe(watch, info)
        why = None
        if node.budget_reason:
            why = node.budget_reason
        elif node.decl.lifecycle.pause_on_sponsor_exit:
            why = "left running while the sponsor was down (pause on sponsor exit is on)"
        elif node.decl.lifecycle.idle_pause_min is not None:
            watch.last_activity = self.clock()  # the sponsor cannot know what happened while it was down
        if why:
            log.info("rented node %s: canceling job %s at start: %s", name, info.id, why)
            self.request_stop(watch, "start", why)

    async def cancel_strays(self, client: HuggingFaceClient, namespace: str, name: str, keep: str | None) -> None:
        """Cancel every running job labelled for rented node ``name`` except ``keep``: a run whose answer
        was lost and was sent again leaves a job nobody watches (it would bill until its window ends)."""
        try:
            found = await client.list_jobs(namespace, {LABEL_SPONSOR: self.manager.sponsor_id, LABEL_RENTED: name})
            for info in found:
                if not info.ended and info.id != keep:
                    await self.cancel_orphan(client, info, name)
        except PairwiseError as exc:
            log.warning("rented node %s: could not look for stray jobs (the next start will): %s", name, exc.message)

    async def cancel_orphan(self, client: HuggingFaceClient, info: JobInfo, name: str) -> None:
        log.info("canceling orphaned job %s/%s of rented node %s (no rented node watches it)",
                 info.namespace, info.id, name or "?")
        ended = await client.cancel_job(info.namespace, info.id)
        orphan = JobRecord(namespace=info.namespace, job_id=info.id, model="", flavor=str(info.flavor or ""),
                           engine="", window_s=int(info.timeout_s or 0), price_per_hour=await self._price(info),
                           created_at=info.created_at or self.wall(), stage=ended.stage, message=ended.message,
                           started_at=ended.started_at or info.started_at, finished_at=ended.finished_at,
                           ended_by="orphaned at start")
        self.charge(name or f"job:{info.id}", orphan)
        self.bus.publish(WindowStopped(node=name, cause="start", job_id=info.id,
                                       reason="an orphaned batch window found by its labels was canceled",
                                       usd=orphan.charged_minutes * orphan.price_per_hour / 60))

    async def _price(self, info: JobInfo) -> float:
        rows = [f for r in await self.hf.client().jobs_hardware() if (f := JobFlavor.parse(r)) is not None]
        row = next((r for r in rows if r.name == info.flavor), None)
        return row.window_price_per_hour if row is not None else 0.0
