"""The process's limit on open files: raised to the hard limit at start, read to size budgets.

A desktop's default soft limit (often 1,024) is far below what the kernel allows the user (the hard
limit); servers raise it at start. Windows has no such limit (``resource`` is POSIX-only): there
both calls do nothing and ``open_file_limit`` reports a fixed figure for sizing listener budgets.
"""

from __future__ import annotations

import logging
import sys

log = logging.getLogger(__name__)

WINDOWS_FIGURE = 8192  # not a limit of the OS; only what budgets are sized from there
CEILING = 1 << 20  # "unlimited" hard limits are capped here (some kernels refuse more)


def open_file_limit() -> int:
    """The soft limit on open files now."""
    if sys.platform == "win32":
        return WINDOWS_FIGURE
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return CEILING if soft == resource.RLIM_INFINITY else int(soft)


def raise_open_file_limit() -> int:
    """Raise the soft limit to the hard limit (POSIX); returns the soft limit now in force."""
    if sys.platform == "win32":
        return WINDOWS_FIGURE  # no per-process descriptor limit to raise
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = CEILING if hard == resource.RLIM_INFINITY else hard
    if sys.platform == "darwin":
        target = min(target, 10240)  # OPEN_MAX: macOS refuses a higher soft limit
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-file limit from %d to %d: %s", soft, target, exc)
    return open_file_limit()
