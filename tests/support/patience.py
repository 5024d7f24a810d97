"""How long a test may wait for a state: a ceiling scaled to how busy this machine is, never a sleep.

A wait returns as soon as its state holds, so a generous ceiling costs nothing when the state comes; it
only decides how long a test that is going to fail takes to say so. On an idle machine the ceilings stay
as written (a regression still fails fast); with every core busy (load average over the core count,
as when other work shares the machine) they grow up to ``MAX_FACTOR`` times. ``PAIRWISE_TEST_PATIENCE``
sets the factor outright (e.g. 1 to see the written bounds under load).
"""

from __future__ import annotations

import os

MAX_FACTOR = 4.0


def factor() -> float:
    chosen = os.environ.get("PAIRWISE_TEST_PATIENCE")
    if chosen:
        return max(1.0, float(chosen))
    try:
        busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        return 1.0
    return min(MAX_FACTOR, max(1.0, busy))


def patience(seconds: float) -> float:
    """``seconds`` as written, scaled by how busy the machine is now."""
    return seconds * factor()
