"""How the tray writes money, durations and states (one place, so every view agrees)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from app.services.api import glossary
from app.services.api.snapshots import JobRow


def money(usd: float | None, *, precise: bool = False) -> str:
    """Dollars with two decimals, sub-cent amounts as ``<$0.01`` (``precise`` is kept for callers; one format)."""
    return glossary.money(usd)


def price(per_hour: float | None) -> str:
    return glossary.per_hour(per_hour)


def hours(value: float) -> str:
    """1 → "1 h", 5.5555 → "5.5 h" (rounded down: a cap is never overstated), 0.25 → "15 min"."""
    if value < 1:
        return f"{int(value * 60)} min"
    tenths = int(value * 10) / 10
    return f"{tenths:g} h"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    h, m = divmod(minutes, 60)
    return f"{h} h {m} min"


def when(ts: float | None) -> str:
    if not ts:
        return "–"
    return time.strftime("%H:%M:%S" if time.time() - ts < 86400 else "%Y-%m-%d %H:%M", time.localtime(ts))


def node_state(row: Mapping[str, Any]) -> str:
    """The state words a node row shows (the glossary's, the same as the CLI's)."""
    return glossary.node_state(row)


def job_duration(job: JobRow) -> float | None:
    if "duration_s" in job:
        return job["duration_s"]
    started = job.get("started_at") or job.get("created_at")
    if started and job.get("state") in ("queued", "running"):
        return max(0.0, time.time() - float(started))
    return None


def tokens(job: JobRow) -> str:
    p, c = job.get("prompt_tokens"), job.get("completion_tokens")
    if p is None and c is None:
        return "–"
    return f"{p or 0} → {c or 0}"
