"""The one broad catch (app/services/guard.py): logged with its traceback, told once per failure,
and the caller goes on; cancellation is never swallowed."""

from __future__ import annotations

import asyncio
import logging

import pytest

from app.services.events import Event, Notice
from app.services.guard import FailureNotices, collect, guarded

log = logging.getLogger("test.guard")


def test_a_failure_is_logged_in_full_and_told_once(caplog: pytest.LogCaptureFixture) -> None:
    told: list[Event] = []
    tell = FailureNotices(told.append, node="sponsor")
    for _ in range(3):  # a loop failing on every tick
        with caplog.at_level(logging.ERROR, "test.guard"), guarded("pause on exit", log, tell):
            raise RuntimeError("HF answered nothing")
    with guarded("pause on exit", log, tell):
        raise TimeoutError("no answer in 15 s")  # a different failure is told again
    assert [r.exc_info is not None for r in caplog.records] == [True, True, True, True]  # every time, in full
    assert told == [
        Notice(title="pause on exit failed", message="RuntimeError: HF answered nothing (details in the node's log)",
               level="error", node="sponsor", at=told[0].at),
        Notice(title="pause on exit failed", message="TimeoutError: no answer in 15 s (details in the node's log)",
               level="error", node="sponsor", at=told[1].at),
    ]


async def test_cancellation_goes_through() -> None:
    async def hook() -> None:
        with guarded("a hook", log):
            await asyncio.Event().wait()

    task = asyncio.create_task(hook())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_broken_provider_costs_only_its_rows() -> None:
    def broken() -> list[dict[str, str]]:
        raise KeyError("name")

    rows = collect([lambda: [{"name": "a"}], broken, lambda: [{"name": "b"}]], "a provider", log)
    assert rows == [{"name": "a"}, {"name": "b"}]
