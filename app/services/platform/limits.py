"""The open-files limit a busy node needs (each stream is a socket, often two).

POSIX: the soft RLIMIT_NOFILE, raised toward the hard limit (macOS refuses more than
``kern.maxfilesperproc`` even when the hard limit says unlimited, hence the second try).
Windows has no per-process limit on sockets (the C runtime's 512 ``FILE*`` limit concerns stdio
streams, which Pairwise does not use for sockets): nothing to raise.
"""

from __future__ import annotations

import sys

MACOS_OPEN_MAX = 10240


def raise_open_files_limit(wanted: int) -> int | None:
    """Raise the soft limit to ``wanted`` (never above the hard limit, never lower than now).

    Returns the soft limit in force afterwards, or None where the OS has no such limit.
    """
    if sys.platform == "win32":
        return None
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target <= soft:
        return soft
    for candidate in (target, min(target, MACOS_OPEN_MAX)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (candidate, hard))
            return candidate
        except (ValueError, OSError):
            continue
    return soft
