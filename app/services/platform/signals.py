"""Stop signals: how a terminal (or a service manager) asks a running node to stop.

POSIX: SIGINT (Ctrl+C) and SIGTERM through the loop's own handlers. Windows: the Proactor loop has
no ``add_signal_handler``; Ctrl+C (SIGINT) and Ctrl+Break (SIGBREAK) arrive through
``signal.signal``, which runs in the main thread and hands the stop to the loop with
``call_soon_threadsafe`` (the Proactor loop wakes on a signal since Python 3.8). SIGTERM is not
sent by Windows; a tray app is stopped by its Quit menu, which calls the same stop.
"""

from __future__ import annotations

import asyncio
import functools
import signal
import sys
from collections.abc import Callable
from typing import Any


def stop_signals() -> tuple[signal.Signals, ...]:
    if sys.platform == "win32":
        return (signal.SIGINT, signal.SIGBREAK)
    return (signal.SIGINT, signal.SIGTERM)


def install_stop_handlers(loop: asyncio.AbstractEventLoop, on_stop: Callable[[], None]) -> Callable[[], None]:
    """Call ``on_stop`` (on the loop) when a stop signal arrives; returns a function that undoes it."""
    undo: list[Callable[[], object]] = []
    for sig in stop_signals():
        if sys.platform != "win32" and _add_loop_handler(loop, sig, on_stop):
            undo.append(functools.partial(loop.remove_signal_handler, sig))
            continue
        undo.append(_set_python_handler(loop, sig, on_stop))

    def uninstall() -> None:
        for step in undo:
            try:
                step()
            except (ValueError, RuntimeError):  # the loop is closed already: nothing left to undo
                pass

    return uninstall


def _add_loop_handler(loop: asyncio.AbstractEventLoop, sig: signal.Signals, on_stop: Callable[[], None]) -> bool:
    try:
        loop.add_signal_handler(sig, on_stop)
    except (NotImplementedError, RuntimeError, ValueError):
        return False  # not the main thread, or a loop without signal support: the portable way instead
    return True


def _set_python_handler(loop: asyncio.AbstractEventLoop, sig: signal.Signals,
                        on_stop: Callable[[], None]) -> Callable[[], None]:
    previous = signal.getsignal(sig)

    def handler(_signum: int, _frame: Any) -> None:
        loop.call_soon_threadsafe(on_stop)

    signal.signal(sig, handler)

    def restore() -> None:
        signal.signal(sig, previous if previous is not None else signal.SIG_DFL)

    return restore


def stop_event(loop: asyncio.AbstractEventLoop) -> tuple[asyncio.Event, Callable[[], None]]:
    """An event set by the first stop signal, and the function that removes the handlers."""
    stop = asyncio.Event()
    return stop, install_stop_handlers(loop, stop.set)
