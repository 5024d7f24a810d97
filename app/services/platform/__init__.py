"""Everything that differs between Linux, macOS and Windows, in one place (Qt-free).

The rest of the code never asks which platform it runs on; it calls these:

| module | what |
| --- | --- |
| ``lock``        | ``InstanceLock``: one process per home (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows) |
| ``signals``     | ``install_stop_handlers``: SIGINT/SIGTERM on POSIX, Ctrl+C/Ctrl+Break on Windows |
| ``hardware``    | memory (sysconf / sysctl ``hw.memsize`` / ``GlobalMemoryStatusEx``) and GPUs (nvidia-smi where present) |
| ``clock``       | ``awake_clock``: a monotonic clock that keeps counting while the machine sleeps |
| ``permissions`` | private files and directories (POSIX modes; on Windows the profile's ACLs, not ``chmod``) |
| ``paths``       | the default home and the per-user autostart location, from platformdirs and each OS's convention |
| ``autostart``   | the login item: XDG autostart, a macOS launch agent, the Windows ``Run`` key |
| ``sockets``     | ``SO_REUSEADDR`` only where it means TIME_WAIT reuse (not on Windows), "address in use" per OS, who listens on a port |
| ``ollama``      | how Ollama is moved to another port on each OS (shown to the user, never run) |
| ``openfiles``   | the open-files limit: raised to the hard limit at start (``resource`` on POSIX; none on Windows) |
| ``desktop``     | whether a window can be shown at all (Linux needs X11/Wayland) |
| ``process``     | ``pid_alive``: is a process still running (psutil: ``OpenProcess`` on Windows, never ``os.kill(pid, 0)``) |
| ``files``       | ``replace_file`` and the readers: atomic replace retried while another process holds the file (Windows) |
| ``console``     | stdout/stderr that never fail on a character (UTF-8 when redirected), whatever the code page |
| ``session_end`` | console close, logoff, shutdown (``SetConsoleCtrlHandler``) stop the node within the OS's grace |

Every module imports on every platform: platform-only modules (``fcntl``, ``msvcrt``, ``winreg``,
``resource``) are imported inside the branch that uses them, so ``mypy --platform win32|darwin``
checks each branch and an import of any ``app`` module never fails on the wrong OS
(``tests/unit/test_platform_imports.py``).
"""

from __future__ import annotations
