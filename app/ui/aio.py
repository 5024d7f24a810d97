"""The tray's asyncio glue: qasync's loop, the async-generator hooks it forgets, and tasks
started from Qt slots.

qasync's ``QEventLoop.run_forever`` runs Qt's loop instead of ``BaseEventLoop.run_forever``, so
asyncio's async-generator hooks are never installed: an async generator abandoned mid-iteration
(a client leaving mid-stream) is then finalised by the garbage collector outside the loop and its
``finally`` (closing the upstream response, finishing the job record) never runs on the loop.
``install_asyncgen_hooks`` puts them in place from the running loop, as ``run_forever`` would.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from app.services.errors import PairwiseError

log = logging.getLogger(__name__)

ErrorSink = Callable[[str, str], None]  # (title, message)


def install_asyncgen_hooks(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Install the running loop's async-generator hooks (what BaseEventLoop.run_forever does)."""
    loop = loop or asyncio.get_running_loop()
    firstiter = getattr(loop, "_asyncgen_firstiter_hook", None)
    finalizer = getattr(loop, "_asyncgen_finalizer_hook", None)
    if firstiter is None or finalizer is None:
        return  # not a BaseEventLoop; it manages its own hooks
    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)


def asyncgen_hooks_installed(loop: asyncio.AbstractEventLoop) -> bool:
    hooks = sys.get_asyncgen_hooks()
    firstiter = getattr(hooks.firstiter, "__self__", None)
    return firstiter is loop


class Tasks:
    """Tasks started from Qt slots: kept referenced until done, errors reported, never lost.

    A PairwiseError carries a title and a message written for people, so it goes to ``on_error``
    as is; anything else is a bug: logged with its traceback and reported briefly.
    """

    def __init__(self, on_error: ErrorSink | None = None) -> None:
        self.on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None,
              on_error: ErrorSink | None = None) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        if name:
            task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._done(t, on_error))
        return task

    def _done(self, task: asyncio.Task[Any], on_error: ErrorSink | None) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        sink = on_error or self.on_error
        if isinstance(exc, PairwiseError):
            title, message = exc.title, exc.message
        else:
            log.error("task %s failed", task.get_name(), exc_info=exc)
            title, message = "Something went wrong", f"{type(exc).__name__}: {exc}"
        if sink is not None:
            sink(title, message)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def error_text(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, PairwiseError):
        return exc.title, exc.message
    return "Something went wrong", f"{type(exc).__name__}: {exc}"
