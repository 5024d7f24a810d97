"""Percentiles and per-path summaries of load samples."""

from __future__ import annotations

import statistics
from typing import Any

from bench.load import Sample


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); no interpolation, so p99 of 100 samples is the 99th."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def ms(value: float) -> float:
    return round(value * 1000, 3)


def latency_summary(samples: list[Sample]) -> dict[str, Any]:
    ok = [s.ttfb_s for s in samples if s.ok]
    errors = [s.error for s in samples if not s.ok]
    return {
        "n": len(samples), "errors": len(errors), "first_error": errors[0] if errors else None,
        "p50_ms": ms(percentile(ok, 50)) if ok else None, "p90_ms": ms(percentile(ok, 90)) if ok else None,
        "p99_ms": ms(percentile(ok, 99)) if ok else None, "mean_ms": ms(statistics.fmean(ok)) if ok else None,
    }


def added(path: dict[str, Any], direct: dict[str, Any], key: str) -> float | None:
    if path.get(key) is None or direct.get(key) is None:
        return None
    return round(path[key] - direct[key], 3)


def reference_for(mode_data: dict[str, Any], path: str) -> dict[str, Any]:
    """The direct figures a path's added time is taken against: its own rotation's, where it had one."""
    return dict(mode_data.get(f"direct_beside_{path}") or mode_data.get("direct") or {})
