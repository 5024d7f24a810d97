"""One process per home: an OS lock on a file, released by the OS when the process dies.

POSIX uses ``flock`` (whole file, advisory); Windows uses ``msvcrt.locking`` on the first byte
(mandatory, per byte range). Either way a crashed process leaves nothing stale behind, so the
lock file itself may stay on disk.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


class InstanceLock:
    """``try_acquire()`` → True for the first holder, False while another process holds it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            locked = _lock(fd)
        except BaseException:
            os.close(fd)
            raise
        if not locked:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            _unlock(fd)
        finally:
            os.close(fd)


def _lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:  # EACCES / EDEADLOCK: another process holds the byte
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        except OSError:  # closing the descriptor releases it anyway
            pass
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)
