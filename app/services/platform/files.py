"""Replacing and reading a node's files while another process may have them open.

On POSIX a rename over a file someone is reading just works. On Windows it fails with a sharing
violation (``PermissionError``: WinError 5 "access denied" or 32 "in use by another process")
while any process holds the target open without ``FILE_SHARE_DELETE``, which is how every
``open()`` of CPython (and most programs: an editor, an antivirus scan, the search indexer) holds
it; and a reader opening the file in the instant it is replaced gets the same error. Both last
only as long as the other side's read, so both sides retry for a few seconds before giving up.

``replace_file`` is the one way the node replaces a file atomically (``app.home.write_private``,
the identity writer, settings); ``read_text``/``read_bytes`` are the readers' side.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

RETRY_FOR_S = 5.0  # a reader holds a small JSON file for milliseconds; an antivirus scan for longer
_FIRST_WAIT_S = 0.005
_MAX_WAIT_S = 0.1
# ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION: what a file held open returns.
SHARING_ERRORS = frozenset({5, 32, 33})


def is_sharing_violation(exc: OSError) -> bool:
    """A Windows error that goes away once the other process closes the file."""
    return isinstance(exc, PermissionError) and getattr(exc, "winerror", None) in SHARING_ERRORS


def retrying(action: Callable[[], T], *, retry_for_s: float = RETRY_FOR_S) -> T:
    """Run ``action``; while it fails with a sharing violation, again, until ``retry_for_s`` passed
    (then the last error is raised: a file held for longer is a real problem to report)."""
    deadline = time.monotonic() + retry_for_s
    wait = _FIRST_WAIT_S
    while True:
        try:
            return action()
        except PermissionError as exc:
            if not is_sharing_violation(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(wait)
        wait = min(wait * 2, _MAX_WAIT_S)


def replace_file(source: Path | str, target: Path | str, *, retry_for_s: float = RETRY_FOR_S) -> None:
    """``os.replace`` that waits out another process holding ``target`` (or ``source``) open."""
    # On POSIX a PermissionError carries no winerror, so it is raised at once, never retried.
    retrying(lambda: os.replace(source, target), retry_for_s=retry_for_s)


def read_bytes(path: Path, *, retry_for_s: float = RETRY_FOR_S) -> bytes:
    """A whole file, waiting out the instant it is being replaced (Windows)."""
    return retrying(path.read_bytes, retry_for_s=retry_for_s)


def read_text(path: Path, *, retry_for_s: float = RETRY_FOR_S) -> str:
    """A whole UTF-8 text file (whatever the code page), waiting out a replace (Windows)."""
    return read_bytes(path, retry_for_s=retry_for_s).decode("utf-8")
