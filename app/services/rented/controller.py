"""What a provider gives the one rented-node loop (``provider_loop.py``) when a poll is not enough.

A provider with ``polls`` is driven by the loop's own poll -> bill -> cap controller. A provider whose
nodes need more (a drift baseline, a price that follows its list, a pause owed until it is taken, a
window charged from its own start) sets ``Provider.controller`` to a ``Controller``; the loop then

- starts it (``sync``: take the manager's nodes in) once the manager has installed its nodes;
- ``tick``\\ s it from its one task, after a wall-clock jump is told, and sleeps until the soonest
  ``sleep_s`` of all its controllers, or until kicked (a node attached or changed, a call ended);
- ``recheck_now`` when the machine woke from sleep, and ``stop`` when the node stops.

A tick never waits on the provider: each call to its API is a task (``spawn``), cancelled with its
node's watch, whose end kicks the loop. A tick that fails is logged and told once as a notice, and
the loop goes on: a controller that stopped would leave a pause owed and a GPU billing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Protocol, runtime_checkable


class Watched(Protocol):
    """What a controller keeps per node for the loop: the calls in flight for it."""

    tasks: set[asyncio.Task[Any]]


@runtime_checkable
class Controller(Protocol):
    what: str  # for the failure notice and the log

    def bind(self, kick: Callable[[], None]) -> None: ...

    def sync(self) -> None: ...

    def tick(self) -> None: ...

    def sleep_s(self) -> float: ...

    def recheck_now(self) -> None: ...

    async def stop(self) -> None: ...


class BaseController:
    """What every controller shares: the loop's kick, the calls in flight, and their cancel at stop.
    Subclasses set ``what`` and implement ``tick``, ``sleep_s`` and ``watched`` (and ``sync``)."""

    what = "a rented-node controller"

    def __init__(self, log: logging.Logger) -> None:
        self._log = log
        self._kick: Callable[[], None] = lambda: None
        self._others: set[asyncio.Task[Any]] = set()  # steps not tied to one watch

    def bind(self, kick: Callable[[], None]) -> None:
        self._kick = kick

    def kick(self) -> None:
        """Look again now (a node was attached, created or changed, or a call ended)."""
        self._kick()

    def sync(self) -> None:
        """Bring the watches in line with the rented nodes (called at start and by every tick)."""

    def tick(self) -> None:
        raise NotImplementedError

    def sleep_s(self) -> float:
        raise NotImplementedError

    def watched(self) -> Iterable[Watched]:
        raise NotImplementedError

    def recheck_now(self) -> None:
        """Ask about every node at once (the machine woke from sleep)."""

    async def stop(self) -> None:
        # Await what was cancelled, so no step outlives the node (or its loop) half-run.
        pending = list(self._others)
        for watch in self.watched():
            pending.extend(watch.tasks)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def spawn(self, watch: Watched, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run one provider call for ``watch`` (cancelled with the watch); the task, for the caller to track."""
        task = _task_or_close(coro)
        watch.tasks.add(task)
        task.add_done_callback(watch.tasks.discard)
        task.add_done_callback(self._done)
        return task

    def spawn_other(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """A step not tied to one node (reconcile at start), cancelled at stop."""
        task = _task_or_close(coro, name)
        self._others.add(task)
        task.add_done_callback(self._others.discard)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._kick()
        if not task.cancelled() and task.exception() is not None:
            self._log.error("%s: a step failed", self.what, exc_info=task.exception())


def _task_or_close(coro: Coroutine[Any, Any, None], name: str | None = None) -> asyncio.Task[None]:
    """The call as a task of the running loop; with no loop to run it (a tick racing the loop's close,
    as the tray quits), the call is closed before the error goes on, so it is refused, not left behind
    un-run for the garbage collector to warn about."""
    try:
        return asyncio.create_task(coro, name=name)
    except RuntimeError:
        coro.close()
        raise
