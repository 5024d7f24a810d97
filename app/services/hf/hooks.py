"""How the Hugging Face controller answers the RentedManager's hooks (app/services/rented/hooks.py).

- ``before_route``: a workload is on its way: the idle timer restarts; a paused managed endpoint with
  ``wake_on_request`` is resumed (event ``woke``) and the request waits out the cold start with
  X-Scale-Up-Timeout. The decision waits for a pause or resume in flight (HF may have taken it before
  its answer is here), and a request that came before HF gave the endpoint its URL waits for it. A
  resume HF refuses, or one a cap forbids, becomes an UpstreamError, so the plan fails over.
- ``on_workload_finished``: the idle timer restarts.
- ``on_budget_reached``: a managed endpoint owes HF a pause (``pause_owed`` at once, ``budget_paused`` once
  HF reports it paused); also when the spend account cannot be trusted (spend.py).
- ``on_sponsor_exit``: pause now. If HF has not taken it within ``stop_timeout_s``, say which endpoint
  still bills and at what price (event ``still_billing`` and a notice: the CLI prints it, the tray
  shows it) and keep trying up to ``exit_give_up_s`` in all; then the next start pauses it and charges
  the gap (HF's own scale-to-zero is the backstop meanwhile).
- ``before_detach``: a managed endpoint that is billing (or may: starting, scaled to zero) is paused
  first; if the pause fails the detach is refused, saying it keeps billing on HF, unless forced.
- ``before_logout`` (HfService): the same for every such endpoint before the token is forgotten
  (without it no pause can be sent); the refusal names them.
- ``on_detach``: stop watching and forget the record.
- ``reconcile_at_start`` (a node start hook): a managed endpoint found running, starting or scaled to
  zero after the sponsor was down is paused if it is over budget, idle, or pause-on-exit is on (a
  clean exit would have paused it) (event ``reconcile_paused``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.services.errors import PairwiseError, RefusedError, UpstreamError
from app.services.events import OwedPauseTaken, StillBilling, Woke
from app.services.hf.errors import HfError, HfNotFound
from app.services.hf.lifecycle import HfLifecycle
from app.services.hf.watch import PAUSABLE_IDLE, STARTING, Watch
from app.services.rented.caps import resume_refusal
from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)
# States in which HF has given the endpoint a URL or is about to (None: not asked yet).
URL_COMING = (None, *STARTING, "running", "scaledToZero")


class HfHooks:
    def __init__(self, lifecycle: HfLifecycle) -> None:
        self.lifecycle = lifecycle
        hooks = lifecycle.manager.hooks
        hooks.before_route.append(self.before_route)
        hooks.on_workload_finished.append(self.on_workload_finished)
        hooks.on_budget_reached.append(self.on_budget_reached)
        hooks.on_sponsor_exit.append(self.on_sponsor_exit)
        hooks.before_detach.append(self.before_detach)
        hooks.on_detach.append(self.on_detach)
        lifecycle.hf.before_logout.append(self.before_logout)

    async def before_route(self, node: RentedUpstream) -> None:
        lc = self.lifecycle
        watch = lc.watch_of(node)
        if watch is None:
            return
        lc.touch(watch)
        life = node.decl.lifecycle
        if not (life.managed and life.wake_on_request):
            return
        # Decided under the lock: a pause (or resume) HF may have taken already, whose answer is still on
        # its way, is seen through first; the request would otherwise go to a paused endpoint.
        async with watch.lock:
            woken = watch.hf_state == "paused"
            if woken:
                await self._wake(node, watch)
        if woken:
            lc.bus.publish(Woke(node=node.name, provider_state=watch.hf_state))
        await self._url_of(node, watch)

    async def _wake(self, node: RentedUpstream, watch: Watch) -> None:
        lc = self.lifecycle
        if lc.manager.exiting:
            raise UpstreamError(f"rented node {node.name} is paused and the sponsor is stopping: not woken")
        refusal = resume_refusal(node)  # a cap reached while this request waited for the pause
        if refusal:
            raise UpstreamError(f"rented node {node.name} is paused and not woken: {refusal}")
        sent = lc.clock()
        lc.asking(watch)
        try:
            info = await lc.hf.client().resume(watch.namespace, watch.endpoint)
        except (HfError, PairwiseError) as exc:
            raise UpstreamError(f"could not wake rented node {node.name}: {exc.message}") from None
        await lc.observe(watch, info, sent)

    async def _url_of(self, node: RentedUpstream, watch: Watch) -> None:
        """A request that came before HF gave the endpoint its URL (it does once a replica is scheduled)
        waits for it, within the node's cold-start budget, while HF is bringing the endpoint up."""
        lc = self.lifecycle
        # The lifecycle polls a starting endpoint every poll_starting_s and takes the URL into this node.
        while (not node.decl.url and watch.hf_state in URL_COMING and watch.error is None
               and node.block_reason is None and lc.manager.nodes.get(node.name) is node):
            watch.answered.clear()
            await watch.answered.wait()

    def on_workload_finished(self, node: RentedUpstream, job: dict[str, Any]) -> None:
        watch = self.lifecycle.watches.get(node.name)
        if watch is not None:
            self.lifecycle.touch(watch)

    async def on_budget_reached(self, node: RentedUpstream, reason: str) -> None:
        watch = self.lifecycle.watch_of(node)
        if watch is not None and node.decl.lifecycle.managed:
            self.lifecycle.request_pause(watch, "budget", reason)

    async def on_sponsor_exit(self, node: RentedUpstream) -> None:
        lc = self.lifecycle
        watch = lc.watch_of(node)
        if watch is None:
            return
        if node.exit_pause_waived:
            log.warning("rented node %s: not paused on exit, as the user chose (it may still be billing; the next "
                        "start pauses it)", node.name)
            return
        tuning = lc.tuning
        started, said = lc.clock(), False
        while True:
            left = tuning.exit_give_up_s - (lc.clock() - started)
            bound = min(left, tuning.stop_timeout_s - (lc.clock() - started)) if not said else left
            try:
                async with asyncio.timeout(max(0.05, bound)):
                    await lc.pause_now(node, "exit", "the sponsor is stopping")
                log.info("rented node %s paused on sponsor exit", node.name)
                if said:
                    lc.bus.publish(OwedPauseTaken(node=node.name, endpoint=f"{watch.namespace}/{watch.endpoint}"))
                return
            except (TimeoutError, PairwiseError) as exc:
                why = exc.message if isinstance(exc, PairwiseError) else "Hugging Face did not answer in time"
            if lc.clock() - started >= tuning.exit_give_up_s:
                self._still_billing(node, watch, why, final=True)
                return
            if not said and lc.clock() - started >= tuning.stop_timeout_s:
                self._still_billing(node, watch, why, final=False)
                said = True
            await asyncio.sleep(min(tuning.poll_starting_s, max(0.0, tuning.exit_give_up_s - (lc.clock() - started))))

    def _still_billing(self, node: RentedUpstream, watch: Watch, why: str, *, final: bool, when: str = "exit",
                       then: str | None = None) -> None:
        lc = self.lifecycle
        price = node.price_per_hour
        cost = f"${price:g}/h" if price else "its hourly price (unknown here)"
        if then is None:
            then = ("gave up: the next start pauses it and charges the time; until then Hugging Face's "
                    "scale-to-zero is the only backstop") if final else \
                   f"still trying, for up to {lc.tuning.exit_give_up_s:g} s in all"
        message = (f"endpoint {watch.namespace}/{watch.endpoint} (rented node {node.name}) is NOT paused and is "
                   f"still billing on Hugging Face at {cost}: {why}; {then}. Pause it on Hugging Face to stop the bill.")
        log.warning("rented node %s: %s", node.name, message)
        lc.bus.publish(StillBilling(node=node.name, endpoint=f"{watch.namespace}/{watch.endpoint}", price_per_hour=price,
                                    error=why, when=when, final=final, message=message))

    async def before_detach(self, node: RentedUpstream, force: bool) -> None:
        failed = await self._pause_billing([node], "detach", "it is being detached")
        if failed and not force:
            raise RefusedError(f"refused to detach {node.name}: {failed[0]}; a detached endpoint keeps billing on "
                               "Hugging Face with nobody watching it. Pause it there, or detach with --yes to "
                               "leave it billing", title="Endpoint still billing")
        watch = self.lifecycle.watch_of(node)
        if failed and watch is not None:
            self._still_billing(node, watch, failed[0], final=True, when="detach",
                                then="detached anyway (--yes): nobody watches it now")

    async def before_logout(self, force: bool) -> None:
        lc = self.lifecycle
        failed = await self._pause_billing(list(lc.manager.nodes.values()), "logout", "the account is signing out")
        if failed and not force:
            raise RefusedError("refused to sign out of Hugging Face: without the token no pause can be sent, and "
                               "these endpoints are still billing: " + "; ".join(failed) + ". Pause them first, "
                               "or sign out with --yes to leave them billing", title="Endpoints still billing")

    async def _pause_billing(self, nodes: list[RentedUpstream], reason: str, detail: str) -> list[str]:
        """Pause every managed endpoint among ``nodes`` that bills (or may); what could not be paused."""
        lc = self.lifecycle
        failed: list[str] = []
        for node in nodes:
            watch = lc.watch_of(node)
            may_bill = watch is not None and (watch.hf_state in PAUSABLE_IDLE or
                                              (watch.hf_state is None and watch.billing.billing))
            if watch is None or not node.decl.lifecycle.managed or not may_bill:
                continue
            try:
                async with asyncio.timeout(lc.tuning.stop_timeout_s):
                    await lc.pause_now(node, reason, detail)
            except HfNotFound:
                continue  # gone on HF: nothing bills
            except (TimeoutError, PairwiseError) as exc:
                why = exc.message if isinstance(exc, PairwiseError) else "Hugging Face did not answer in time"
                price = node.price_per_hour
                failed.append(f"{node.name} ({watch.namespace}/{watch.endpoint}, {watch.hf_state}"
                              f"{f', ${price:g}/h' if price else ''}) could not be paused: {why}")
        return failed

    async def on_detach(self, node: RentedUpstream) -> None:
        self.lifecycle.forget(node.name)

    async def reconcile_at_start(self) -> None:
        for watch in list(self.lifecycle.watches.values()):
            self.lifecycle.spawn(watch, self._reconcile(watch))

    async def _reconcile(self, watch: Watch) -> None:
        lc = self.lifecycle
        await lc.poll(watch)
        # HF not answering yet (the network comes up after us at login): keep asking, since an
        # endpoint a crash left running bills until this decision is made.
        while watch.hf_state is None and watch.error is not None and watch.name in lc.manager.nodes:
            await asyncio.sleep(lc.tuning.poll_starting_s)
            await lc.poll(watch)
        node = lc.manager.nodes.get(watch.name)
        # Scaled to zero counts too: it still holds GPU quota and any caller with a token wakes it.
        if node is None or not node.decl.lifecycle.managed or watch.hf_state not in PAUSABLE_IDLE:
            return
        life, record = node.decl.lifecycle, lc.records.get(watch.name)
        why = None
        if node.budget_reason:
            why = node.budget_reason
        elif life.idle_pause_min is not None and (record is None or record.last_activity is None
                                                  or lc.wall() - record.last_activity >= life.idle_pause_min * 60):
            why = f"idle for more than {life.idle_pause_min:g} min while the sponsor was down"
        elif life.pause_on_sponsor_exit:
            why = "left running while the sponsor was down (pause on sponsor exit is on)"
        if why:
            log.info("rented node %s: pausing at start: %s", watch.name, why)
            lc.request_pause(watch, "start", why)
