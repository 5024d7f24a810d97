"""A batch's money: what its rented copies have cost since it began to use them, and its budget.

The cost of a batch is what its rented copies' spend accounts grew by since the batch first used
each of them (the larger of the workload shares and the minutes the provider billed,
``rented/meter.py``), so it is what the provider bills, idle minutes included. At ``budget_usd`` the
batch stops using rented copies (local copies and peers go on) and pauses each managed endpoint (or
stops each batch window) it was the only user of since it began, so billing ends within a minute
of the budget. ``deadline`` is when the user wants the batch done: ``plan`` sizes a rented window
on it; ``completion_window`` is the hard end.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.services.backends.base import Upstream
from app.services.batch.shapes import duration_s
from app.services.errors import ConfigError, PairwiseError
from app.services.jobs.records import Workload
from app.services.rented.provider import Action, run_action

if TYPE_CHECKING:
    from app.services.batch.context import BatchBook, BatchNode

log = logging.getLogger(__name__)


def parse_budget(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        budget = float(value)
    except ValueError:
        raise ConfigError(f"metadata budget_usd must be a number of US dollars, not {value[:40]!r}") from None
    if not budget >= 0:
        raise ConfigError("metadata budget_usd must be zero or more")
    return budget


def parse_deadline(value: str | None, now: float) -> int | None:
    """``2h`` (from now), an ISO 8601 time (``2026-12-01T08:00:00Z``) or Unix seconds."""
    if value is None:
        return None
    relative = duration_s(value)
    if relative is not None:
        return int(now + relative)
    try:
        return int(float(value))
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"metadata deadline must be a duration (2h), an ISO 8601 time or Unix seconds, "
                          f"not {value[:40]!r}") from None
    return int(when.timestamp())


class BatchMoney:
    def __init__(self, node: BatchNode, service: BatchBook) -> None:
        self.node, self.service = node, service
        self._pauses: set[asyncio.Task[None]] = set()

    def _spent(self, name: str) -> float | None:
        manager = self.node.rented
        if manager is None or name not in manager.nodes:
            return None
        return manager.meter.spent(name, "month")

    def cost(self, batch_id: str, internal: dict[str, Any]) -> float:
        total = 0.0
        for name, baseline in (internal.get("rented_baseline") or {}).items():
            spent = self._spent(name)
            frozen = (internal.get("rented_final") or {}).get(name)
            if frozen is not None:
                total += frozen
            elif spent is not None:
                total += max(0.0, spent - baseline)
        return total

    def may_use(self, batch_id: str, upstream: Upstream) -> bool:
        if upstream.kind != "rented":
            return True
        internal = self.service.internal(batch_id)
        if internal.get("rented_stopped"):
            return False
        name = upstream.display_name()
        if name not in (internal.get("rented_baseline") or {}):
            spent = self._spent(name)
            if spent is not None:
                internal.setdefault("rented_baseline", {})[name] = spent
                internal.setdefault("rented_since", {})[name] = time.time()
                self.service.save_internal(batch_id, internal)
        return self._check(batch_id, internal)

    def served(self, batch_id: str, upstream: Upstream, job: Workload | None, seconds: float) -> None:
        if upstream.kind == "rented":
            self._check(batch_id, self.service.internal(batch_id))

    def _check(self, batch_id: str, internal: dict[str, Any]) -> bool:
        """Whether the batch may go on using rented copies; at its budget, stop and pause them."""
        budget = internal.get("budget_usd")
        if budget is None or internal.get("rented_stopped"):
            return not internal.get("rented_stopped")
        cost = self.cost(batch_id, internal)
        if cost < budget:
            return True
        internal["rented_stopped"] = f"budget reached: ${cost:.2f} of ${budget:.2f}"
        self.service.save_internal(batch_id, internal)
        run = self.service.runs.get(batch_id)
        for name, since in (internal.get("rented_since") or {}).items():
            if run is not None:
                for upstream in run.uses("rented"):
                    if upstream.display_name() == name:
                        run.leave(upstream.key)
            if self._sole_user(batch_id, name, since):
                task = asyncio.ensure_future(self._pause(name))
                self._pauses.add(task)
                task.add_done_callback(self._pauses.discard)
        log.info("batch %s: %s; rented copies left", batch_id, internal["rented_stopped"])
        return False

    def _sole_user(self, batch_id: str, name: str, since: float) -> bool:
        """Whether no one but this batch used rented node ``name`` since the batch began to."""
        label = f"pairwise batch {batch_id}"
        for job in self.node.jobs.list(limit=5000):
            if job.created_at < since:
                break
            if job.rented_node == name and job.requester.app != label:
                return False
        return True

    async def _pause(self, name: str) -> None:
        """Stop the billing of a rented node only this batch used: pause an endpoint, end a window."""
        manager = self.node.rented
        try:
            if manager is None or name not in manager.nodes:
                return
            node = manager.get(name)
            provider = manager.providers.of(node.decl.provider)
            if Action.PAUSE in provider.capabilities and node.decl.lifecycle.managed:
                await run_action(provider, Action.PAUSE, name)
            elif Action.STOP in provider.capabilities:  # a fixed window: ended, never paused
                await run_action(provider, Action.STOP, name)
        except PairwiseError as exc:
            log.warning("batch budget: could not stop rented node %s: %s", name, exc.message)

    def finished(self, batch_id: str) -> None:
        """The batch ended: the window rented for it stops (if no one else used it), and its cost is
        frozen (a later use of the same endpoint is not the batch's)."""
        internal = self.service.internal(batch_id)
        window = internal.get("rented_window")
        since = (internal.get("rented_since") or {}).get(window, time.time())
        if window and self._sole_user(batch_id, window, since):
            task = asyncio.ensure_future(self._pause(window))
            self._pauses.add(task)
            task.add_done_callback(self._pauses.discard)
        final = {name: max(0.0, (self._spent(name) or baseline) - baseline)
                 for name, baseline in (internal.get("rented_baseline") or {}).items()}
        if final:
            internal["rented_final"] = final
            self.service.save_internal(batch_id, internal)
