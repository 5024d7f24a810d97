"""A controller's provider call when there is no loop left to run it (a tick racing the loop's close, as
the tray quits): refused with the loop's error and closed at once, never left un-run for the garbage
collector to warn "coroutine ... was never awaited" about, and never counted as in flight."""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import warnings
from dataclasses import dataclass, field
from typing import Any

import pytest

from app.services.rented.controller import BaseController

log = logging.getLogger("test.controller")


@dataclass
class Watch:
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)


class Polling(BaseController):
    what = "a test controller"

    def __init__(self) -> None:
        super().__init__(log)
        self.polled = 0

    async def poll(self) -> None:
        self.polled += 1


def _closed_without_a_warning(spawn_it: Any) -> None:
    controller = Polling()
    coro = controller.poll()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):
            spawn_it(controller, coro)
        assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED
        del coro
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert controller.polled == 0


def test_a_call_for_a_node_with_no_loop_is_refused_and_closed() -> None:
    watch = Watch()
    _closed_without_a_warning(lambda controller, coro: controller.spawn(watch, coro))
    assert watch.tasks == set()


def test_a_step_of_no_node_with_no_loop_is_refused_and_closed() -> None:
    _closed_without_a_warning(lambda controller, coro: controller.spawn_other(coro, "reconcile"))


def test_with_a_loop_the_call_runs_and_leaves_the_watch() -> None:
    async def main() -> tuple[int, int]:
        controller, watch = Polling(), Watch()
        task = controller.spawn(watch, controller.poll())
        in_flight = len(watch.tasks)
        await task
        await asyncio.sleep(0)  # the done callbacks run at the loop's next turn
        return in_flight, controller.polled + 10 * len(watch.tasks)

    assert asyncio.run(main()) == (1, 1)
