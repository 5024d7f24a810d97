"""Files only their owner may read.

POSIX: modes (0700 directories, 0600 files), tightened when someone loosened them (a restore from a
backup, a copy). Windows: ``chmod`` only toggles the read-only flag there, so it is not used to
pretend; a home under the user's profile (``%LOCALAPPDATA%``, platformdirs' default) inherits the
profile's ACL, which grants the user, SYSTEM and Administrators only — private by default.
A home the user puts elsewhere on Windows carries that folder's ACL; ``privacy_note`` says so.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def modes_apply() -> bool:
    """True where file modes decide who may read (POSIX); False on Windows (ACLs do)."""
    return sys.platform != "win32"


def make_private_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    tighten(path, PRIVATE_DIR)


def tighten(path: Path, mode: int) -> None:
    """Take away any permission beyond ``mode`` (POSIX); nothing on Windows (see the module note)."""
    if not modes_apply():
        return
    current = stat.S_IMODE(path.stat().st_mode)
    if current & ~mode:
        os.chmod(path, current & mode)


def tighten_fd(fd: int, mode: int) -> None:
    """``tighten`` for a file being written (before any byte of a secret reaches it)."""
    if sys.platform != "win32":
        os.fchmod(fd, mode)


def loose_permissions(path: Path, allowed: int) -> str | None:
    """What makes ``path`` readable or writable by others than its owner, or None when it is private.

    On Windows this returns None: the check that matters there is the folder's ACL, which a
    home under the profile inherits (see ``privacy_note``).
    """
    if not modes_apply():
        return None
    info = path.stat()
    extra = stat.S_IMODE(info.st_mode) & ~allowed
    if extra:
        return f"{path} has mode {stat.S_IMODE(info.st_mode):04o}; only {allowed:04o} is allowed (extra {extra:04o})"
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        return f"{path} belongs to user id {info.st_uid}, not to this user ({getuid()})"
    return None


def privacy_note(home: Path) -> str:
    """One sentence on what keeps ``home`` private on this OS (for status and docs)."""
    if modes_apply():
        return f"{home} is mode 0700 and its secrets 0600 (owner only)"
    return (f"{home} is private through Windows' ACLs when it lies under your user profile (the default); "
            "Pairwise does not change ACLs")
