"""The session ending is an exit (issue 28, item 7), with the OS's call faked: Windows' console
control handler for close, logoff and shutdown; the tray's Qt hooks are in tests/ui."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable

import pytest

from app.services.platform import session_end
from app.services.platform.session_end import (
    CTRL_CLOSE_EVENT,
    CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
    follow_console_session_end,
)


class FakeConsole:
    """``SetConsoleCtrlHandler``: keeps the handler; ``send`` calls it from a thread as Windows does."""

    def __init__(self) -> None:
        self.handler: Callable[[int], bool] | None = None

    def register(self, handler: Callable[[int], bool]) -> None:
        self.handler = handler

    def send(self, event: int) -> tuple[threading.Thread, list[bool]]:
        assert self.handler is not None
        returned: list[bool] = []
        thread = threading.Thread(target=lambda: returned.append(self.handler(event)))  # type: ignore[misc]
        thread.start()
        return thread, returned


async def _serve_until_stopped(console: FakeConsole, event: int, stop_takes_s: float,
                               grace_s: float = 4.5) -> tuple[list[str], list[bool], session_end.SessionEnd]:
    """What ``pairwise serve`` does: wait for the stop, run the node's stop (pause on exit), then done."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    session = follow_console_session_end(lambda: loop.call_soon_threadsafe(stop.set), register=console.register)
    session.grace_s = grace_s
    steps: list[str] = []
    thread, returned = console.send(event)
    await stop.wait()
    steps.append(f"pause on exit ({session.reason})")
    await asyncio.sleep(stop_takes_s)  # the pause request to Hugging Face
    steps.append("stopped")
    session.done()
    await asyncio.to_thread(thread.join, 10)
    return steps, returned, session


@pytest.mark.parametrize("event", [CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT])
async def test_close_logoff_and_shutdown_run_the_stop_and_hold_windows_until_it_finished(event: int) -> None:
    console = FakeConsole()
    steps, returned, session = await _serve_until_stopped(console, event, stop_takes_s=0.3)
    assert steps == [f"pause on exit ({session_end.SESSION_END[event]})", "stopped"]
    assert returned == [True]  # handled: Windows ends the process only now


async def test_a_stop_longer_than_windows_waits_is_said(caplog: pytest.LogCaptureFixture,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    console = FakeConsole()
    with caplog.at_level(logging.WARNING):
        _, returned, _ = await _serve_until_stopped(console, CTRL_CLOSE_EVENT, stop_takes_s=0.6, grace_s=0.1)
    assert returned == [True]
    assert "before its stop finished" in caplog.text and "may still bill" in capsys.readouterr().err


def test_ctrl_c_and_ctrl_break_are_left_to_pythons_handler() -> None:
    asked: list[str] = []
    console = FakeConsole()
    follow_console_session_end(lambda: asked.append("stop"), register=console.register)
    assert console.handler is not None
    assert console.handler(0) is False and console.handler(1) is False  # CTRL_C_EVENT, CTRL_BREAK_EVENT
    assert asked == []


def test_nothing_is_registered_off_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    session = follow_console_session_end(lambda: None)
    assert not session.ending and session_end._KEEP == []
