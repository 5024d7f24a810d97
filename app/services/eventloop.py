"""The event loop of a headless node: uvloop where it is installed, asyncio's own otherwise.

uvloop (libuv) makes the loop's own work per request and per chunk cheaper: its
transports write and read in C, and its timers and call_soon cost less (measured in
bench/README.md). The tray keeps qasync's loop, which has to be Qt's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_name() -> str:
    """What ``run`` will use, for logs and the bench."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:  # not on this platform (Windows) or not installed: the standard loop
        return asyncio.run(main)
    return uvloop.run(main)
