"""How the Hugging Face controller answers the RentedManager's hooks (app/services/rented/hooks.py).

- ``before_route``: a workload is on its way: the idle timer restarts; a paused managed endpoint with
  ``wake_on_request`` is resumed (event ``woke``) and the request waits out the cold start with
  X-Scale-Up-Timeout. A resume HF refuses becomes an UpstreamError, so the plan fails over.
- ``on_workload_finished``: the idle timer restarts.
- ``on_budget_reached``: a managed endpoint owes HF a pause (event ``budget_paused`` once taken).
- ``on_sponsor_exit``: pause now, bounded by ``stop_timeout_s``; if HF does not answer in time the
  next start pauses it (HF's own scale-to-zero is the backstop meanwhile).
- ``on_detach``: stop watching and forget the record.
- ``reconcile_at_start`` (a node start hook): a managed endpoint found running, starting or scaled to
  zero after the sponsor was down is paused if it is over budget, idle, or pause-on-exit is on (a
  clean exit would have paused it) (event ``reconcile_paused``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.services.errors import PairwiseError, UpstreamError
from app.services.events import Woke
from app.services.hf.errors import HfError
from app.services.hf.lifecycle import HfLifecycle
from app.services.hf.watch import PAUSABLE_IDLE, Watch
from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)


class HfHooks:
    def __init__(self, lifecycle: HfLifecycle) -> None:
        self.lifecycle = lifecycle
        hooks = lifecycle.manager.hooks
        hooks.before_route.append(self.before_route)
        hooks.on_workload_finished.append(self.on_workload_finished)
        hooks.on_budget_reached.append(self.on_budget_reached)
        hooks.on_sponsor_exit.append(self.on_sponsor_exit)
        hooks.on_detach.append(self.on_detach)

    async def before_route(self, node: RentedUpstream) -> None:
        lc = self.lifecycle
        watch = lc.watch_of(node)
        if watch is None:
            return
        lc.touch(watch)
        life = node.decl.lifecycle
        if not (life.managed and life.wake_on_request) or watch.hf_state != "paused":
            return
        if lc.manager.exiting:
            raise UpstreamError(f"rented node {node.name} is paused and the sponsor is stopping: not woken")
        async with watch.lock:
            if watch.hf_state != "paused":
                return
            sent = lc.clock()
            try:
                info = await lc.hf.client().resume(watch.namespace, watch.endpoint)
            except (HfError, PairwiseError) as exc:
                raise UpstreamError(f"could not wake rented node {node.name}: {exc.message}") from None
            await lc.observe(watch, info, sent)
        lc.bus.publish(Woke(node=node.name, hf_state=watch.hf_state))

    def on_workload_finished(self, node: RentedUpstream, job: dict[str, Any]) -> None:
        watch = self.lifecycle.watches.get(node.name)
        if watch is not None:
            self.lifecycle.touch(watch)

    async def on_budget_reached(self, node: RentedUpstream, reason: str) -> None:
        watch = self.lifecycle.watch_of(node)
        if watch is not None and node.decl.lifecycle.managed:
            self.lifecycle.request_pause(watch, "budget", reason)

    async def on_sponsor_exit(self, node: RentedUpstream) -> None:
        if self.lifecycle.watch_of(node) is None:
            return
        limit = self.lifecycle.tuning.stop_timeout_s
        try:
            async with asyncio.timeout(limit):
                await self.lifecycle.pause_now(node, "exit", "the sponsor is stopping")
            log.info("rented node %s paused on sponsor exit", node.name)
        except (TimeoutError, PairwiseError) as exc:
            message = exc.message if isinstance(exc, PairwiseError) else f"no answer within {limit:g} s"
            log.warning("rented node %s NOT paused on exit (the next start will; HF's scale-to-zero is the "
                        "backstop meanwhile): %s", node.name, message)

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
