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
from app.services.guard import guarded
from app.services.jobs.records import Workload
from app.services.rented.provider import Action

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


MONEY_POLL_S = 1.0  # a budget's clock looks at least this often (an endpoint's minutes, a per-token node's answers)


class BatchMoney:
    def __init__(self, node: BatchNode, service: BatchBook) -> None:
        self.node, self.service = node, service
        self._pauses: set[asyncio.Task[None]] = set()
        self._clocks: dict[str, asyncio.Task[None]] = {}  # batch id -> its budget's clock

    def _spent(self, name: str) -> float | None:
        manager = self.node.rented
        if manager is None or name not in manager.nodes:
            return None
        # Every minute the provider has started by now, not only by its loop's last tick.
        manager.providers.of(manager.get(name).decl.provider).charge_due(name)
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
        self._start_clock(batch_id, internal)
        return self._check(batch_id, internal)

    def _start_clock(self, batch_id: str, internal: dict[str, Any]) -> None:
        """A budget is checked on the money clock, not only when a line ends: at each minute a window starts
        on its provider's clock (the minute that reaches the budget is the one billed beyond it), so a slow or stalled
        loop of lines cannot let the window bill on."""
        if internal.get("budget_usd") is None or internal.get("rented_stopped") or batch_id in self._clocks:
            return
        task = asyncio.ensure_future(self._clock(batch_id))
        self._clocks[batch_id] = task
        task.add_done_callback(lambda _: self._clocks.pop(batch_id, None))

    async def _clock(self, batch_id: str) -> None:
        with guarded(f"batch {batch_id} budget", log):
            while True:
                internal = self.service.internal(batch_id)
                if "rented_final" in internal or not self._check(batch_id, internal):
                    return  # the batch ended, or left its rented copies
                await asyncio.sleep(self._next_charge_in(internal))

    def _next_charge_in(self, internal: dict[str, Any]) -> float:
        soonest, manager = MONEY_POLL_S, self.node.rented
        for name in internal.get("rented_baseline") or {}:
            node = manager.nodes.get(name) if manager is not None else None
            due = None if node is None or manager is None else \
                manager.providers.of(node.decl.provider).next_charge_in(name)
            if due is not None:
                soonest = min(soonest, due)
        return soonest

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
        why = internal["rented_stopped"] = f"budget reached: ${cost:.2f} of ${budget:.2f}"
        run = self.service.runs.get(batch_id)
        for name, since in (internal.get("rented_since") or {}).items():
            # The stop first: every moment before the provider has it may start another billed minute.
            if self._sole_user(batch_id, name, since):
                self._spawn_pause(name, "budget", f"batch {batch_id}: {why}")
            if run is not None:
                for upstream in run.uses("rented"):
                    if upstream.display_name() == name:
                        run.leave(upstream.key)
        self.service.save_internal(batch_id, internal)
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

    def _spawn_pause(self, name: str, cause: str, why: str) -> None:
        task = asyncio.ensure_future(self._pause(name, cause, why))
        self._pauses.add(task)
        task.add_done_callback(self._pauses.discard)

    async def _pause(self, name: str, cause: str, why: str) -> None:
        """Stop the billing of a rented node only this batch used: pause an endpoint, end a window. A
        window's cancel is sent now; one its provider refuses stays owed, and is asked again."""
        manager = self.node.rented
        try:
            if manager is None or name not in manager.nodes:
                return
            node = manager.get(name)
            provider = manager.providers.of(node.decl.provider)
            if Action.PAUSE in provider.capabilities and not node.decl.lifecycle.managed:
                return  # an endpoint Pairwise does not manage is never paused by it
            if Action.PAUSE in provider.capabilities or Action.STOP in provider.capabilities:
                await provider.stop_for_budget(name, cause, why)
        except PairwiseError as exc:
            log.warning("batch budget: could not stop rented node %s: %s", name, exc.message)

    def finished(self, batch_id: str) -> None:
        """The batch ended: the window rented for it stops (if no one else used it), and its cost is
        frozen (a later use of the same endpoint is not the batch's)."""
        internal = self.service.internal(batch_id)
        window = internal.get("rented_window")
        since = (internal.get("rented_since") or {}).get(window, time.time())
        if window and self._sole_user(batch_id, window, since):
            self._spawn_pause(window, "user", f"the batch {batch_id} it was rented for ended")
        clock = self._clocks.pop(batch_id, None)
        if clock is not None:
            clock.cancel()
        final = {name: max(0.0, (self._spent(name) or baseline) - baseline)
                 for name, baseline in (internal.get("rented_baseline") or {}).items()}
        if final:
            internal["rented_final"] = final
            self.service.save_internal(batch_id, internal)
