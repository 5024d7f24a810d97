"""The session ending (the console window closed, Windows logging off or shutting down) is an exit:
the node runs its stop, pause on exit first, within the time the OS gives, and says so when that
time runs out first.

Windows tells a console process through its control handler (``SetConsoleCtrlHandler``):
``CTRL_CLOSE_EVENT`` when its console window is closed, ``CTRL_LOGOFF_EVENT`` and
``CTRL_SHUTDOWN_EVENT`` at logoff and shutdown. The handler runs on a thread of its own, and the
process is ended as soon as it returns, or about 5 seconds after the event in any case
(``SPI_GETHUNGAPPTIMEOUT`` / ``WaitToKillAppTimeout``): so it asks the loop to stop and waits, at most
``GRACE_S``, for the stop to finish. Ctrl+C and Ctrl+Break are left to Python's own handler
(``platform.signals``). POSIX sends SIGTERM or SIGHUP instead (``signals``); a tray app hears of
the session's end through Qt (``app.ui.quitting.follow_session_end``).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT = 2, 5, 6
SESSION_END = {CTRL_CLOSE_EVENT: "the console window was closed", CTRL_LOGOFF_EVENT: "Windows is logging off",
               CTRL_SHUTDOWN_EVENT: "Windows is shutting down"}
GRACE_S = 4.5  # under the ~5 s Windows waits after the event before it ends the process


class SessionEnd:
    """Bridges the OS's "the session ends" to the loop's stop; ``done()`` once the stop finished."""

    def __init__(self, request_stop: Callable[[], object], grace_s: float = GRACE_S) -> None:
        self.request_stop = request_stop
        self.grace_s = grace_s
        self.reason: str | None = None  # set once the session is ending
        self._stopped = threading.Event()

    @property
    def ending(self) -> bool:
        return self.reason is not None

    def done(self) -> None:
        self._stopped.set()

    def on_control_event(self, event: int) -> bool:
        """The console control handler: True when handled (the process then ends)."""
        reason = SESSION_END.get(event)
        if reason is None:
            return False  # Ctrl+C, Ctrl+Break: the next handler (Python's signal machinery) takes them
        self.reason = reason
        self.request_stop()
        if not self._stopped.wait(self.grace_s):
            message = (f"{reason}: Windows ends Pairwise before its stop finished; a rented GPU that "
                       "pauses on exit may still bill (it is paused, and its billed minutes charged, at the next start)")
            log.warning(message)
            print(f"WARNING: {message}", file=sys.stderr, flush=True)
        return True


_KEEP: list[Any] = []  # the C callback must outlive the call that registered it


def follow_console_session_end(request_stop: Callable[[], object], *,
                               register: Callable[[Callable[[int], bool]], None] | None = None) -> SessionEnd:
    """Run ``request_stop`` (thread-safe: it is called from the OS's thread) when the session ends.

    ``register`` installs the handler (default: ``SetConsoleCtrlHandler`` on Windows, nothing elsewhere).
    """
    session = SessionEnd(request_stop)
    if register is None:
        register = _set_console_ctrl_handler if sys.platform == "win32" else (lambda handler: None)
    register(session.on_control_event)
    return session


def _set_console_ctrl_handler(handler: Callable[[int], bool]) -> None:
    if sys.platform == "win32":
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        callback = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.DWORD)(lambda event: bool(handler(int(event))))
        _KEEP.append(callback)
        if not kernel32.SetConsoleCtrlHandler(callback, True):
            log.warning("could not follow the console's close, logoff and shutdown: error %d", ctypes.get_last_error())


def block_shutdown(window_id: int, reason: str) -> bool:
    """Windows: name why this window holds up logoff or shutdown (shown on the "apps are preventing
    shutdown" screen, which goes on by itself once the window's program exits). False elsewhere."""
    if sys.platform != "win32":
        return False
    import ctypes
    from ctypes import wintypes

    user32 = ctypes.WinDLL("user32", use_last_error=True)
    user32.ShutdownBlockReasonCreate.argtypes = (wintypes.HWND, wintypes.LPCWSTR)
    return bool(user32.ShutdownBlockReasonCreate(window_id, reason))
