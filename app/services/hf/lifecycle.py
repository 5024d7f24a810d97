"""`HfLifecycle`: the sponsor's controller for the Hugging Face endpoints behind its rented nodes.

It drives the RentedManager's nodes (app/services/rented) from one loop; hooks.py answers the
manager's hooks with it (wake, budget, exit, detach, reconcile at start).

- **State** from the management API only (never an inference call): polled every
  `poll_starting_s` while an endpoint starts or a pause is pending, every `poll_steady_s` otherwise.
  HF's word goes to `node.set_state_word`, which maps it (running → eligible, scaledToZero → cold,
  paused → paused, pending/initializing/updating → starting, failed/updateFailed → unhealthy with
  HF's message). A failure emits `rented_failed`.
- **Drift**: model or hardware changed, type made public, or deleted outside Pairwise → the node is
  ineligible (`block_reason`, naming what changed); it clears when the endpoint is back as recorded.
- **Price follows HF**: every poll that finds the endpoint billing (or about to) re-reads the price of
  the compute HF reports for it (pricing.py: the `/v2/provider` list, cached under half a billed
  minute). A change of compute or price is announced (`price_changed`) and charged from then on at
  the new price, with the minutes since the old price was last confirmed charged the difference. A
  compute HF does not price makes the node ineligible and pauses a managed endpoint (`price_unknown`).
  The meter charges at the higher of the declared and HF's price.
- **Billing**: billed minutes (billing.py) are charged to the endpoint's spend account (shared by
  every sponsor home, kept across restarts: rented/spend.py) as each one starts; the manager checks
  the caps and calls `on_budget_reached`, where a managed endpoint is paused (`budget_paused`). The
  loop wakes at each minute boundary, so the overshoot past a cap is at most the minute that crossed it.
- **Downtime**: a managed endpoint whose account has an open stretch when watching begins (the
  sponsor was down, or detached it while billing) is charged from the stretch's last saved point as
  soon as HF reports it billing, or at once if HF cannot be asked, before anything else is decided.
- **The cap is a standing rule**: every poll that finds a managed endpoint over its cap and billing
  (or about to) pauses it again, whoever resumed it (`cap_enforced`, with a notice).
- **An owed pause goes out at once**: a poll in flight never holds it up (polls and pauses are
  separate single-attempt calls with their own short timeout, `control_timeout_s`; the loop itself
  tries again, honouring Retry-After only up to the next billed minute). A pause the money owes (cap,
  price) raises `pause_owed` when it is decided, others once an attempt failed; then once per billed
  minute until HF reports the endpoint paused, when a budget pause is told (`budget_paused`). An answer
  to a request older than one already taken in is stale and ignored.
- **Time**: ``clock`` is the awake clock and ``wall`` the timebase's steady wall clock
  (rented/timebase.py), so a wall-clock jump neither charges nor forgets billed minutes.
- **Idle pause** after `idle_pause_min` (fractions allowed) without a workload: pause, not
  scale-to-zero (`idle_paused`).
- **User actions**: `pause_now` / `resume_now` (`rented pause|resume`).

A pause that HF refuses or cannot take (429, 5xx, timeouts) is not dropped: its reason stays on
the watch and the loop asks again until HF reports the endpoint paused.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from app.services.clock import awake_clock
from app.services.errors import PairwiseError, RefusedError
from app.services.events import (
    CapEnforced,
    EventBus,
    IdlePaused,
    OwedPauseTaken,
    PauseOwed,
    PriceChanged,
    PriceUnknown,
    ReconcilePaused,
    RentedDrifted,
    RentedFailed,
    RentedPaused,
)
from app.services.hf.billing import BilledMinutes
from app.services.hf.client import HuggingFaceClient
from app.services.hf.errors import HfError, HfNotFound
from app.services.hf.models import BILLED_STATES, EndpointInfo
from app.services.hf.pricing import HfPrices, Priced
from app.services.hf.records import EndpointRecord, EndpointRecords
from app.services.hf.service import HfService
from app.services.hf.watch import (
    DRIFT_PREFIX,
    OVER_CAP_PAUSES,
    PAUSABLE_IDLE,
    STARTING,
    Watch,
    is_hf_endpoint,
    split_endpoint,
)
from app.services.rented.caps import resume_refusal
from app.services.rented.controller import BaseController
from app.services.rented.decl import apply_changes
from app.services.rented.manager import RentedManager
from app.services.rented.timebase import steady
from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)

# A pause owed for these outranks an idle pause (and is not replaced by one).
FIRM_PAUSES = ("budget", "start", "price", "detach", "logout", "exit", "user")
# Pauses the money owes: announced (PauseOwed) from the moment they are decided, not only after a failure.
ANNOUNCED_PAUSES = ("budget", "price")
SAVE_ACTIVITY_EVERY_S = 5.0


class HfLifecycle(BaseController):
    what = "the Hugging Face lifecycle"

    def __init__(self, hf: HfService, manager: RentedManager, records: EndpointRecords, bus: EventBus, *,
                 clock: Callable[[], float] = awake_clock, wall: Callable[[], float] = steady) -> None:
        self.hf, self.manager, self.records, self.bus = hf, manager, records, bus
        self.tuning = hf.tuning
        self.clock, self.wall = clock, wall
        self.watches: dict[str, Watch] = {}
        super().__init__(log)
        self._saved_at = 0.0
        self.prices = HfPrices(self.tuning.billing_minute_s / 2, clock)
        manager.hooks.account_keys.append(self.account_key)
        manager.hooks.confirms_pause.append(lambda node: is_hf_endpoint(node) and node.decl.lifecycle.managed)

    # -- running (driven by the rented nodes' one loop: rented/provider_loop.py) ------------------------------------------------------

    async def stop(self) -> None:
        await super().stop()
        self._save_activity(force=True)

    def recheck_now(self) -> None:
        """Poll every endpoint at once (the machine woke from sleep: what HF says may have changed)."""
        for watch in self.watches.values():
            watch.next_poll = 0.0
        self.kick()

    def watched(self) -> list[Watch]:
        return list(self.watches.values())

    def sleep_s(self) -> float:
        # With nothing to watch, sleep long: an attach or a change kicks the loop (node_changed).
        now, soonest = self.clock(), (1.0 if self.watches else 30.0)
        for watch in self.watches.values():
            candidates = [watch.billing.next_minute_in(now)]
            if not watch.polling():  # a call in flight kicks the loop when it ends
                candidates.append(watch.next_poll - now)
            if watch.pause_reason:
                candidates.append(watch.next_owed_notice - now)
                if not watch.pausing():
                    candidates.append(watch.next_pause_try - now)
            soonest = min([soonest, *(c for c in candidates if c is not None)])
        return max(0.005, soonest)

    def tick(self) -> None:
        self.sync()
        now = self.clock()
        for watch in list(self.watches.values()):
            node = self.manager.nodes.get(watch.name)
            if node is None:
                continue
            self._charge(watch, node, now)
            self._check_idle(watch, node, now)
            self._owed_notice(watch, now)
            # A pause owed goes out at once, whatever poll is in flight (each call has its own short
            # timeout and no retry sleep: the loop is what tries again).
            if watch.pause_reason and now >= watch.next_pause_try and not watch.pausing():
                watch.pause_task = self.spawn(watch, self._pause(watch))
            if now >= watch.next_poll and not watch.polling() and not watch.pausing():
                watch.poll_task = self.spawn(watch, self.poll(watch))
        self._save_activity()

    def sync(self) -> None:
        current = {n.name: n for n in self.manager.nodes.values() if is_hf_endpoint(n)}
        for name in list(self.watches):
            node = current.get(name)
            if node is None or self.watches[name].endpoint != split_endpoint(node.decl.endpoint or "")[1]:
                for task in self.watches.pop(name).tasks:
                    task.cancel()
        for name, node in current.items():
            if name not in self.watches:
                namespace, endpoint = split_endpoint(node.decl.endpoint or "")
                watch = Watch(name, namespace, endpoint, BilledMinutes(self.tuning.billing_minute_s),
                              last_activity=self.clock())
                if node.decl.lifecycle.managed:
                    # Billed while nobody watched (sponsor down, or detached billing): charged once HF
                    # says it bills, or at once if HF cannot say (observe / _unknown).
                    watch.saved_stretch = self.manager.meter.stretch(name) or self._unanswered_ask(name)
                self.watches[name] = watch

    def _unanswered_ask(self, name: str) -> dict[str, Any] | None:
        """A sponsor asked HF to start billing (create, resume, wake) and stopped before it saw the
        endpoint billing: if HF now says it bills, billing may have begun as early as the ask."""
        start = self.manager.meter.open_ask(name)
        return None if start is None else {"start": start, "charged": 0}

    def account_key(self, decl: Any) -> str | None:
        """An HF endpoint's spend account: HF's API host and the endpoint's namespace/name."""
        if decl.provider != "huggingface-endpoint" or not decl.endpoint:
            return None
        return self.endpoint_account(decl.endpoint)

    def endpoint_account(self, endpoint: str) -> str:
        """The spend account of the endpoint ``namespace/name`` on this HF."""
        return f"hf-endpoint:{urlsplit(self.hf.urls.endpoints).netloc}/{endpoint}"

    def asking(self, watch: Watch | str, asked: bool = True) -> None:
        """Record, before the call goes out, that this sponsor asks HF to start billing the endpoint
        (``asked=False``: a pause withdraws the ask). ``watch`` or ``namespace/name``."""
        endpoint = watch if isinstance(watch, str) else f"{watch.namespace}/{watch.endpoint}"
        self.manager.meter.asked(self.endpoint_account(endpoint), self.wall() if asked else None)

    def wall_of(self, at: float) -> float:
        """The wall-clock time of a moment on ``clock``."""
        return self.wall() - (self.clock() - at)

    def watch_of(self, node: RentedUpstream) -> Watch | None:
        if not is_hf_endpoint(node):
            return None
        self.sync()
        return self.watches.get(node.name)

    def _client(self, watch: Watch) -> HuggingFaceClient | None:
        try:
            return self.hf.client()
        except PairwiseError as exc:
            watch.error = exc.message
            return None

    # -- observing ---------------------------------------------------------------------------------------------

    async def poll(self, watch: Watch) -> None:
        client = self._client(watch)
        if client is None:
            watch.next_poll = self.clock() + self.tuning.poll_steady_s
            self._unknown(watch)
            return
        sent = self.clock()
        try:
            info = await client.get_endpoint(watch.namespace, watch.endpoint, once=True)
            priced = await self.prices.of(client, info) if info.state in BILLED_STATES else None
        except HfNotFound:
            self._deleted(watch)
            return
        except HfError as exc:
            self._failed_call(watch, exc)
            self._unknown(watch)
            return
        finally:
            watch.next_poll = self.clock() + self.tuning.poll_steady_s
        await self.observe(watch, info, sent, priced)

    def _unknown(self, watch: Watch) -> None:
        """HF could not be asked: an endpoint that was billing when last saved is taken to bill still."""
        if watch.saved_stretch is None or watch.hf_state is not None:
            return
        node = self.manager.nodes.get(watch.name)
        self._resume_stretch(watch)
        if node is not None:
            self._charge(watch, node, self.clock())

    def _resume_stretch(self, watch: Watch) -> None:
        saved, watch.saved_stretch = watch.saved_stretch, None
        if saved is None:
            return
        node = self.manager.nodes.get(watch.name)
        if node is not None and node.provider_price is None and isinstance(saved.get("price"), int | float):
            node.provider_price = float(saved["price"])  # the last price HF was seen to charge
        start = self.clock() - (self.wall() - float(saved["start"]))
        watch.billing.align(start, 0)  # every minute since the saved start is due; the account knows which
        log.info("rented node %s: billing since %s while nobody watched; charging the gap",
                 watch.name, time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(saved["start"]))))

    async def observe(self, watch: Watch, info: EndpointInfo, sent: float, priced: Priced | None = None) -> None:
        """Take in an endpoint as HF showed it in answer to a request sent at ``sent`` (and the price of
        its compute, when it was read)."""
        if sent < watch.observed_sent:
            # An answer to a request older than one already taken in (a slow poll overtaken by a pause):
            # what it shows is stale and must not undo what the newer answer said.
            watch.answered.set()
            return
        watch.observed_sent = sent
        node = self.manager.nodes.get(watch.name)
        watch.error = None
        if node is not None and node.provider_unreachable is not None:
            node.provider_unreachable = None
            self.manager.changed(f"rented node {watch.name}: Hugging Face answers again")
        previous = watch.hf_state
        watch.hf_state = info.state
        if node is not None and priced is not None:
            self._priced(watch, node, priced)
        billed = info.state in BILLED_STATES
        if watch.saved_stretch is not None:
            if billed:
                self._resume_stretch(watch)  # the downtime is charged below, before any decision
            watch.saved_stretch = None
        if node is not None and watch.billing.billing and not billed:
            self._charge(watch, node, sent)  # minutes started before HF was seen not billing
        watch.billing.observe(info.state, sent)
        if not billed:
            self.manager.meter.unbilled(watch.name, self.wall_of(sent))
        elif node is not None:
            self._charge(watch, node, self.clock())
        # Watched closely while starting, while a pause is owed, and while over the cap: a resume from
        # elsewhere is then caught while HF is still scheduling it (pending is not billed).
        over_cap = node is not None and node.decl.lifecycle.managed and node.budget_reason is not None
        starting = info.state in STARTING or (watch.pause_reason is not None and info.state != "paused") or over_cap
        watch.next_poll = self.clock() + (self.tuning.poll_starting_s if starting else self.tuning.poll_steady_s)
        if info.state == "paused" and watch.pause_reason:
            self._paused(watch)
        if node is None:
            return
        node.simulated = node.simulated or self._simulated()
        record = self.records.get(watch.name)
        if record is None:
            record = EndpointRecord.of(info, created=False)
            self.records.put(watch.name, record)
        changed = self._check_drift(node, record.drift(info), watch)
        if info.instance_type and node.decl.gpu != info.gpu:
            # `rented show` names what HF runs it on now (the drift, if it is one, is told apart).
            node.update_decl(apply_changes(node.decl, {"gpu": info.gpu}))
            self.manager.keep_declarations()
            changed = True
        first_url = self._take_first_url(watch, node, info.url)
        node.set_state_word(info.state, info.message or None)
        watch.answered.set()
        if info.state in ("failed", "updateFailed") and previous != info.state:
            self.bus.publish(RentedFailed(node=watch.name, provider_state=info.state, message=info.message or info.state))
        self._enforce_cap(watch, node, previous, info.state)
        if previous != info.state or changed:
            self.manager.changed(f"rented node {watch.name} is {info.state} on Hugging Face")
        if info.url and (first_url or node.decl.url != info.url):
            try:  # the manager keeps it (and probes a changed URL on a new node before it serves)
                await self.manager.merge(watch.name, {"url": info.url})
            except PairwiseError as exc:
                self._url_refused(watch, exc)

    def _take_first_url(self, watch: Watch, node: RentedUpstream, url: str | None) -> bool:
        """Take HF's first URL for the endpoint (given once a replica is scheduled) into the node itself,
        with its state: a request waiting for it (wake on request) holds this node, and a node that
        shows running must be able to serve. The manager would install a new node, and only once it
        has probed it."""
        if not url or node.decl.url:
            return False
        try:
            node.update_decl(apply_changes(node.decl, {"url": url}))
        except PairwiseError as exc:
            self._url_refused(watch, exc)
            return False
        return True

    @staticmethod
    def _url_refused(watch: Watch, exc: PairwiseError) -> None:
        watch.error = f"could not take the endpoint's URL: {exc.message}"
        log.warning("rented node %s: %s", watch.name, watch.error)

    def _simulated(self) -> bool:
        try:
            return self.hf.client().simulated
        except PairwiseError:
            return False  # signed out meanwhile

    def _check_drift(self, node: RentedUpstream, changes: list[str], watch: Watch) -> bool:
        if changes:
            reason = f"{DRIFT_PREFIX}endpoint {watch.namespace}/{watch.endpoint} changed outside Pairwise: " + \
                     "; ".join(changes)
            if node.block_reason != reason:
                node.block_reason = reason
                self.bus.publish(RentedDrifted(node=watch.name, reason=reason))
                return True
        elif node.block_reason and node.block_reason.startswith(DRIFT_PREFIX):
            node.block_reason = None
            return True
        return False

    def _deleted(self, watch: Watch) -> None:
        watch.next_poll = self.clock() + self.tuning.poll_steady_s
        watch.hf_state = None
        watch.error = None  # HF answered: there is nothing there
        watch.billing.observe(None, self.clock())
        watch.pause_reason = None  # nothing left to pause
        watch.answered.set()
        node = self.manager.nodes.get(watch.name)
        if node is None:
            return
        reason = f"{DRIFT_PREFIX}endpoint {watch.namespace}/{watch.endpoint} was deleted outside Pairwise"
        if node.block_reason != reason:
            node.block_reason = reason
            node.set_state_word(None, "deleted on Hugging Face")
            self.bus.publish(RentedDrifted(node=watch.name, reason=reason))
            self.manager.changed(f"rented node {watch.name} deleted on Hugging Face")

    def _failed_call(self, watch: Watch, exc: HfError) -> None:
        # The last known state stands; the message says why it may be stale, until a call succeeds.
        watch.error = exc.message
        watch.answered.set()
        log.warning("rented node %s: %s", watch.name, exc.message)
        node = self.manager.nodes.get(watch.name)
        if node is not None:
            if node.provider_unreachable is None:
                self.manager.changed(f"rented node {watch.name}: Hugging Face cannot be reached")
            node.provider_unreachable = exc.message
            if node.state_word is not None:
                node.set_state_word(node.state_word, f"state may be stale: {exc.message}")

    # -- billing and idle --------------------------------------------------------------------------------------

    def _charge(self, watch: Watch, node: RentedUpstream, now: float) -> None:
        """Charge the minutes of the billing stretch started by ``now`` to the endpoint's account."""
        if watch.billing.stretch_start is None:
            return
        if not watch.billing.due(now) and not watch.reprice:
            return
        watch.reprice = False
        billed = self.manager.meter.bill(
            watch.name, since=self.wall_of(watch.billing.stretch_start), now=self.wall_of(now),
            minute_s=self.tuning.billing_minute_s, price_per_hour=node.price_per_hour or 0.0,
            price_seen_at=None if watch.price_seen_at is None else self.wall_of(watch.price_seen_at))
        watch.billing.align(self.clock() - (self.wall() - billed.start), billed.charged)
        self.manager.check_budget(node)

    # -- price -------------------------------------------------------------------------------------------------

    def _priced(self, watch: Watch, node: RentedUpstream, priced: Priced) -> None:
        if priced.price_per_hour is None:
            reason = (f"price unknown: Hugging Face lists no price for {priced.compute}, the compute of endpoint "
                      f"{watch.namespace}/{watch.endpoint}; a cost that cannot be counted is not allowed")
            if node.price_reason != reason:
                node.price_reason = reason
                log.warning("rented node %s: %s", watch.name, reason)
                self.bus.publish(PriceUnknown(node=watch.name, endpoint=f"{watch.namespace}/{watch.endpoint}",
                                              compute=priced.compute, reason=reason,
                                              paused=node.decl.lifecycle.managed))
                self.manager.changed(f"rented node {watch.name} {reason}")
            if node.decl.lifecycle.managed and watch.pause_reason is None:
                self.request_pause(watch, "price", reason)
            return
        if node.price_reason:
            node.price_reason = None
            self.manager.changed(f"rented node {watch.name} is priced again")
        old, new = node.provider_price, priced.price_per_hour
        watch.price_seen_at = priced.read_at
        if (old, watch.compute) == (new, priced.compute):
            return
        before = node.price_per_hour
        node.provider_price, was_compute, watch.compute = new, watch.compute, priced.compute
        self.manager.meter.set_price(watch.name, node.price_per_hour)
        if old is None or was_compute is None:
            return  # the first price seen: nothing changed
        watch.reprice = True
        what = (f"compute {was_compute} -> {priced.compute}, " if was_compute != priced.compute else "") + \
               f"${old:g}/h -> ${new:g}/h on Hugging Face"
        log.info("rented node %s: %s (charged at $%g/h from now, was $%g/h)", watch.name, what,
                 node.price_per_hour or 0.0, before or 0.0)
        self.bus.publish(PriceChanged(node=watch.name, endpoint=f"{watch.namespace}/{watch.endpoint}",
                                      compute=priced.compute, old_price_per_hour=old, price_per_hour=new,
                                      charged_per_hour=node.price_per_hour or new))

    # -- the cap -----------------------------------------------------------------------------------------------

    def _enforce_cap(self, watch: Watch, node: RentedUpstream, previous: str | None, state: str) -> None:
        """Over the cap and billing (or about to): pause again, whoever resumed it."""
        self.manager.check_budget(node)
        if not node.decl.lifecycle.managed or not node.budget_reason or state not in OVER_CAP_PAUSES:
            return
        if watch.pause_reason in FIRM_PAUSES:
            return  # a pause is already owed
        if previous == "paused":  # someone resumed it (Pairwise itself refuses to, over the cap)
            event = CapEnforced(node=watch.name, endpoint=f"{watch.namespace}/{watch.endpoint}", provider_state=state,
                                reason=node.budget_reason)
            log.warning("rented node %s: %s", watch.name, event.summary())
            self.bus.publish(event)
        self.request_pause(watch, "budget", node.budget_reason)

    def _check_idle(self, watch: Watch, node: RentedUpstream, now: float) -> None:
        life = node.decl.lifecycle
        if not life.managed or life.idle_pause_min is None or watch.pause_reason:
            return
        if watch.hf_state not in PAUSABLE_IDLE or node.in_flight or node.waking:
            return
        if now - watch.last_activity >= life.idle_pause_min * 60.0:
            self.request_pause(watch, "idle", f"no workload for {life.idle_pause_min:g} min")

    def _save_activity(self, *, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._saved_at < SAVE_ACTIVITY_EVERY_S:
            return
        self._saved_at = now
        dirty = False
        for watch in self.watches.values():
            record = self.records.get(watch.name)
            if watch.activity_dirty and record is not None:
                record.last_activity = self.wall() - (now - watch.last_activity)
                watch.activity_dirty, dirty = False, True
        if dirty:
            self.records.save()

    # -- pausing -----------------------------------------------------------------------------------------------

    def request_pause(self, watch: Watch, reason: str, detail: str = "") -> None:
        """Owe HF a pause; the loop keeps asking until HF reports the endpoint paused."""
        if watch.pause_reason in FIRM_PAUSES and reason == "idle":
            return
        if watch.pause_reason is None:
            watch.owed_since, watch.next_owed_notice = self.wall(), 0.0
        watch.pause_reason, watch.pause_detail, watch.next_pause_try = reason, detail, 0.0
        self._owed_notice(watch, self.clock())  # a pause the money owes is said at once, not after a failure
        self.kick()

    async def _pause(self, watch: Watch) -> None:
        client = self._client(watch)
        if client is None:
            watch.next_pause_try = self.clock() + self.tuning.poll_steady_s
            watch.pause_failed = watch.error
            return
        async with watch.lock:
            if watch.pause_reason is None:
                return
            sent = self.clock()
            try:
                info = await client.pause(watch.namespace, watch.endpoint, once=True)
                self.asking(watch, asked=False)
            except HfNotFound:
                self._deleted(watch)
                return
            except HfError as exc:
                self._failed_call(watch, exc)
                watch.pause_failed = exc.message
                watch.next_pause_try = self.clock() + self._pause_retry_in(watch, exc.retry_after_s)
                return
            await self.observe(watch, info, sent)

    def _pause_retry_in(self, watch: Watch, retry_after_s: float | None) -> float:
        """When to ask again: HF's Retry-After is honoured, but never past the start of the next billed
        minute (waiting longer would cost that minute), with time left for the attempt itself."""
        t = self.tuning
        wait = t.poll_starting_s if retry_after_s is None else retry_after_s
        to_minute = watch.billing.next_minute_in(self.clock())
        if to_minute is None:
            return min(wait, t.billing_minute_s)
        margin = min(t.control_timeout_s, t.billing_minute_s / 4)
        return max(min(t.poll_starting_s, 0.05), min(wait, to_minute - margin))

    def _owed_notice(self, watch: Watch, now: float) -> None:
        """A pause is owed: say so once per billed minute until HF reports the endpoint paused. A pause
        the money owes (a cap, an unknown price) is said from the moment it is decided; the others
        once an attempt failed."""
        if not watch.pause_reason or now < watch.next_owed_notice:
            return
        if not (watch.pause_failed or watch.pause_reason in ANNOUNCED_PAUSES):
            return
        watch.next_owed_notice = now + self.tuning.billing_minute_s
        node = self.manager.nodes.get(watch.name)
        price = node.price_per_hour if node is not None else None
        billing_since = None if watch.billing.stretch_start is None else self.wall_of(watch.billing.stretch_start)
        event = PauseOwed(node=watch.name, endpoint=f"{watch.namespace}/{watch.endpoint}",
                          reason=watch.pause_detail or watch.pause_reason, error=watch.pause_failed or "",
                          price_per_hour=price, owed_since=watch.owed_since or self.wall(),
                          billing_since=billing_since, provider_state=watch.hf_state)
        log.warning("rented node %s: %s", watch.name, event.summary())
        self.bus.publish(event)

    def _paused(self, watch: Watch) -> None:
        reason, detail = watch.pause_reason, watch.pause_detail
        watch.pause_reason, watch.pause_detail, watch.owed_since = None, "", None
        watch.next_owed_notice = 0.0
        if watch.pause_failed:
            watch.pause_failed, watch.next_owed_notice = None, 0.0
            self.bus.publish(OwedPauseTaken(node=watch.name, endpoint=f"{watch.namespace}/{watch.endpoint}"))
        if reason is None:
            return
        log.info("rented node %s paused on Hugging Face (%s)", watch.name, detail or reason)
        node = self.manager.nodes.get(watch.name)
        if reason == "idle" and node is not None:
            self.bus.publish(IdlePaused(node=watch.name, idle_minutes=node.decl.lifecycle.idle_pause_min or 0.0))
        elif reason == "start":
            self.bus.publish(ReconcilePaused(node=watch.name, reason=detail or reason))
        elif reason in ("price", "detach", "logout"):
            self.bus.publish(RentedPaused(node=watch.name, why=reason, detail=detail or reason))
        elif reason == "budget":
            # Told only now that HF confirms it (till then it was a pause owed: PauseOwed).
            reached = self.manager.budget_pause_confirmed(watch.name)
            if reached is not None:
                self.bus.publish(reached)
        # A user's pause was told by the user.

    async def pause_now(self, node: RentedUpstream, reason: str = "user", detail: str = "") -> EndpointInfo:
        """Pause at once (a user's `rented pause`, exit); raises HfError if HF will not."""
        watch = self._require(node)
        client = self.hf.client()
        watch.pause_reason, watch.pause_detail = reason, detail
        async with watch.lock:
            sent = self.clock()
            info = await client.pause(watch.namespace, watch.endpoint)
            self.asking(watch, asked=False)
            await self.observe(watch, info, sent)
        return info

    async def resume_now(self, node: RentedUpstream) -> EndpointInfo:
        watch = self._require(node)
        client = self.hf.client()
        info = await client.get_endpoint(watch.namespace, watch.endpoint)
        priced = await self.prices.of(client, info)
        if priced is not None:
            self._priced(watch, node, priced)
        self.manager.check_budget(node)
        refusal = resume_refusal(node)
        if refusal:
            raise RefusedError(f"refused to resume {node.name}: {refusal}", title="Budget reached")
        async with watch.lock:
            watch.pause_reason = None
            watch.last_activity = self.clock()  # a resume starts a fresh idle period
            sent = self.clock()
            self.asking(watch)
            info = await self.hf.client().resume(watch.namespace, watch.endpoint)
            await self.observe(watch, info, sent)
        return info

    def touch(self, watch: Watch) -> None:
        """A workload used the endpoint: the idle timer starts again."""
        watch.last_activity, watch.activity_dirty = self.clock(), True
        if watch.pause_reason == "idle":
            watch.pause_reason = None  # work arrived before the idle pause was taken

    def forget(self, name: str) -> None:
        watch = self.watches.pop(name, None)
        if watch is not None:
            for task in watch.tasks:
                task.cancel()
        self.records.forget(name)

    def _require(self, node: RentedUpstream) -> Watch:
        watch = self.watch_of(node)
        if watch is None:
            raise PairwiseError(f"rented node {node.name} is not a Hugging Face endpoint", title="Not an HF endpoint")
        return watch
