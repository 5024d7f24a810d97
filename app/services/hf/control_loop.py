"""The loop both Hugging Face controllers run (endpoints: lifecycle.py; batch windows: jobs_lifecycle.py).

One task ticks: it looks at every watched rented node, charges what is due and starts at most one HF
call per node (``spawn``); it sleeps until the soonest thing due (``_sleep_s``) or until kicked (a node
attached or changed, a call ended). A tick that fails is logged with its traceback and told once as a
notice, and the loop goes on: a controller that stopped would leave a pause owed and a GPU billing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from typing import Any, Protocol

from app.services.events import EventBus, Notice
from app.services.guard import FailureNotices, guarded
from app.services.rented.timebase import describe_jump, timebase


class Watched(Protocol):
    """What the loop needs of a watch: the HF calls in flight for its node."""

    tasks: set[asyncio.Task[Any]]


class ControlLoop:
    """Subclasses set ``name`` and ``what`` and implement ``_tick``, ``_sleep_s`` and ``_watched``."""

    name = "hf-control"  # the task's name
    what = "a Hugging Face controller"  # for the failure notice and the log

    def __init__(self, bus: EventBus, log: logging.Logger) -> None:
        self._task: asyncio.Task[None] | None = None
        self._kick = asyncio.Event()
        self._tell = FailureNotices(bus.publish)
        self._bus = bus
        self._log = log
        self._others: set[asyncio.Task[Any]] = set()  # steps not tied to one watch

    def _tick(self) -> None:
        raise NotImplementedError

    def _sleep_s(self) -> float:
        raise NotImplementedError

    def _watched(self) -> Iterable[Watched]:
        raise NotImplementedError

    def _sync(self) -> None:
        """Bring the watches in line with the rented nodes (called at start and by every tick)."""

    async def start(self) -> None:
        self._sync()
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        # Await what was cancelled, so no step outlives the node (or its loop) half-run.
        pending = [self._task] if self._task else []
        pending.extend(self._others)
        for watch in self._watched():
            pending.extend(watch.tasks)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self._task = None

    def kick(self) -> None:
        """Look again now (a node was attached, created or changed, or a call ended)."""
        self._kick.set()

    async def _run(self) -> None:
        while True:
            with guarded(self.what, self._log, self._tell):
                self._clock_jumped()
                self._tick()
            try:
                await asyncio.wait_for(self._kick.wait(), timeout=self._sleep_s())
            except TimeoutError:
                pass
            self._kick.clear()

    def _clock_jumped(self) -> None:
        """A wall-clock jump is told once (whichever controller sees it first): billing never used it."""
        moved = timebase().jumped()
        if moved is not None:
            message = describe_jump(moved)
            self._log.warning("%s", message)
            self._bus.publish(Notice(title="The system clock jumped", message=message, level="warning"))

    def spawn(self, watch: Watched, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run one HF call for ``watch`` (cancelled with the watch); the task, for the caller to track."""
        task = asyncio.create_task(coro)
        watch.tasks.add(task)
        task.add_done_callback(watch.tasks.discard)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._kick.set()
        if not task.cancelled() and task.exception() is not None:
            self._log.error("%s: a step failed", self.what, exc_info=task.exception())
