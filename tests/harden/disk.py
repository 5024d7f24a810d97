"""A node's home on a disk that bad luck can reach: a small tmpfs that fills up, and a read-only
bind mount laid over the home while the node runs (files it already holds open stay writable, as
after a remount; every new write is refused by the kernel, whoever runs the node, root included).

Both are made by the test and removed by it; they need root (mount), which the test machines have.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True)


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


class SmallDisk:
    """A tmpfs of ``size`` at ``path`` (the node's home)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filler = path / "filler.bin"
        self._read_only = False

    def fill(self) -> None:
        """Write until the disk says it is full (ENOSPC), leaving not one block free.

        Unbuffered: a buffered file keeps the bytes a full disk refused and raises ENOSPC again
        when it is closed, which depends on how the last write happened to straddle the end."""
        for name, chunk in ((self.filler, 65536), (self.path / "filler-tail.bin", 512)):
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
            finally:
                os.close(fd)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)
        (self.path / "filler-tail.bin").unlink(missing_ok=True)

    def read_only(self) -> None:
        """Lay a read-only bind mount of the home over itself."""
        _mount("--bind", str(self.path), str(self.path))
        _mount("-o", "remount,bind,ro", str(self.path))
        self._read_only = True

    def writable(self) -> None:
        if self._read_only:
            _umount(self.path)
            self._read_only = False


@contextlib.contextmanager
def small_disk(path: Path, size: str = "24m") -> Iterator[SmallDisk]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small disk needs root (the test machines run as root)")
    path.mkdir(parents=True, exist_ok=True)
    try:
        _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path))
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc.stderr.strip()}")
    disk = SmallDisk(path)
    try:
        yield disk
    finally:
        disk.writable()
        _umount(path)
