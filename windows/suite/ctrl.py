"""Run under Wine: start a command in a new process group on this console, wait until ``ready``
(a file) exists, send it Ctrl+C or Ctrl+Break as a console would, and relay its output and exit
code. Windows delivers console control events only within a console, so the sender has to be a
Windows process sharing it; Ctrl+C goes to the whole console group (this launcher ignores it)."""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import time
from pathlib import Path

CTRL_C_EVENT, CTRL_BREAK_EVENT = 0, 1


def main() -> int:
    which, ready, command = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the Ctrl+C we send reaches us too
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    # Started from Linux with pipes for stdio, Wine gives us no console; a user's terminal is one.
    if not kernel32.GetConsoleWindow():
        kernel32.AllocConsole()
    flags = subprocess.CREATE_NEW_PROCESS_GROUP if which == "break" else 0
    child = subprocess.Popen(command, creationflags=flags, stdin=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not ready.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            print(f"ctrl.py: the child ended or never got ready ({child.poll()})", flush=True)
            return 3
        time.sleep(0.05)
    event, group = (CTRL_BREAK_EVENT, child.pid) if which == "break" else (CTRL_C_EVENT, 0)
    sent_at = time.monotonic()
    if not kernel32.GenerateConsoleCtrlEvent(event, group):
        print(f"ctrl.py: GenerateConsoleCtrlEvent failed: {ctypes.get_last_error()}", flush=True)
        child.kill()
        return 4
    code = child.wait(60)
    print(f"ctrl.py: sent {which}; child exited {code} after {time.monotonic() - sent_at:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
