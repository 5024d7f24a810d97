"""Pairwise."""

import sys

# httpx's __init__ imports its command-line tool (httpx._main: click, rich and pygments, about 140 ms
# and 4 MB) whenever those packages are installed beside it; no part of Pairwise runs that tool, so it
# is held out before anything imports httpx (httpx then defines a ``main`` that says it is missing).
if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]
