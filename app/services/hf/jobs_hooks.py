"""How the batch-window controller answers the RentedManager's hooks (app/services/rented/hooks.py).

- ``before_route`` / ``on_workload_finished``: a workload came: the idle stop counts again.
- ``on_budget_reached``: cancel the job (a window cannot pause; event ``budget_stopped``).
- ``on_sponsor_exit``: cancel now, bounded by ``stop_timeout_s``; if HF does not answer in time the
  next start cancels it, and HF's own timeout ends it at the window's end anyway.
- ``on_detach``: a running window is canceled first: nothing would watch its bill afterwards.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.services.errors import PairwiseError, RefusedError
from app.services.hf.jobs_lifecycle import JobLifecycle
from app.services.hf.jobs_models import EXIT_STOP, TERMINAL
from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)


class JobHooks:
    def __init__(self, lifecycle: JobLifecycle) -> None:
        self.lifecycle = lifecycle
        hooks = lifecycle.manager.hooks
        hooks.before_route.append(self.before_route)
        hooks.on_workload_finished.append(self.on_workload_finished)
        hooks.on_budget_reached.append(self.on_budget_reached)
        hooks.on_sponsor_exit.append(self.on_sponsor_exit)
        hooks.on_detach.append(self.on_detach)

    async def before_route(self, node: RentedUpstream) -> None:
        watch = self.lifecycle.watch_of(node)
        if watch is not None:
            self.lifecycle.touch(watch)

    def on_workload_finished(self, node: RentedUpstream, job: dict[str, Any]) -> None:
        watch = self.lifecycle.watches.get(node.name)
        if watch is not None:
            self.lifecycle.touch(watch)

    async def on_budget_reached(self, node: RentedUpstream, reason: str) -> None:
        watch = self.lifecycle.watch_of(node)
        if watch is not None:
            self.lifecycle.request_stop(watch, "budget", reason)

    async def on_sponsor_exit(self, node: RentedUpstream) -> None:
        if self.lifecycle.watch_of(node) is None:
            return
        limit = self.lifecycle.tuning.stop_timeout_s
        try:
            async with asyncio.timeout(limit):
                await self.lifecycle.stop_now(node, "exit", EXIT_STOP)
            log.info("rented node %s: batch window canceled on sponsor exit", node.name)
        except (TimeoutError, PairwiseError) as exc:
            message = exc.message if isinstance(exc, PairwiseError) else f"no answer within {limit:g} s"
            log.warning("rented node %s: batch window NOT canceled on exit (the next start will; HF ends it at the "
                        "window's end meanwhile): %s", node.name, message)

    async def on_detach(self, node: RentedUpstream) -> None:
        record = self.lifecycle.records.get(node.name)
        if self.lifecycle.watch_of(node) is not None and record is not None and record.stage not in TERMINAL:
            try:
                await self.lifecycle.stop_now(node, "user", "the rented node was detached")
            except PairwiseError as exc:
                raise RefusedError(f"refused to detach {node.name}: its batch window is still running and could not "
                                   f"be canceled ({exc.message}); nothing would watch its bill") from None
        self.lifecycle.forget(node.name)
