"""Whether a process still runs, asked the way each OS answers it.

POSIX answers ``kill(pid, 0)``; Windows has no signal 0: ``os.kill(pid, 0)`` there *sends*
``CTRL_C_EVENT`` (to the caller's own console group when it shares one), which stops the node it
meant to ask about. psutil asks ``OpenProcess`` on Windows and ``kill(pid, 0)`` on POSIX.
"""

from __future__ import annotations

import psutil


def pid_alive(pid: int) -> bool:
    """True while a process with this id exists (a zombie counts as gone: it serves nothing)."""
    if pid <= 0:
        return False  # 0 is "every process in my group" to kill(2), not a process
    try:
        if not psutil.pid_exists(pid):
            return False
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # it exists; someone else's (another user's node is still a running node)
