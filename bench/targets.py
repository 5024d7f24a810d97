"""The targets of issue 18 as pass/fail fields: ``targets: {name: {value, target, met}}`` in the JSON.

A target is an aim the bench reports on; tests never assert speed. ``value`` is None (and ``met``
False) when the run did not measure it, e.g. a phase left out or a path skipped.
"""

from __future__ import annotations

from typing import Any

from bench.stats import added

# name: (description, path, "<=" or ">=", target)
TARGETS: dict[str, tuple[str, str, str, float]] = {
    "added_p50_stream_ms_1hop": ("added p50, stream (ms), 1 hop", "pairwise", "<=", 1.0),
    "added_p50_stream_ms_2hops": ("added p50, stream (ms), 2 hops", "pairwise_2hop", "<=", 3.0),
    "cpu_us_per_paced_chunk_1hop": ("router CPU per paced chunk (µs), 1 hop", "pairwise", "<=", 60.0),
    "cpu_us_per_paced_chunk_2hops": ("router CPU per paced chunk (µs), both nodes", "pairwise_2hop", "<=", 150.0),
    "unpaced_pct_of_direct_1hop": ("unpaced stream, % of direct, 1 hop", "pairwise", ">=", 90.0),
    "unpaced_pct_of_direct_2hops": ("unpaced stream, % of direct, 2 hops", "pairwise_2hop", ">=", 60.0),
    "p99_ttfb_256_streams_x_direct_1hop": ("256 streams p99 TTFB, × direct, 1 hop", "pairwise", "<=", 3.0),
    "p99_ttfb_256_streams_x_direct_2hops": ("256 streams p99 TTFB, × direct, 2 hops", "pairwise_2hop", "<=", 6.0),
    "errors_256_streams_1hop": ("errors at 256 streams, 1 hop", "pairwise", "<=", 0),
    "errors_256_streams_2hops": ("errors at 256 streams, 2 hops", "pairwise_2hop", "<=", 0),
    "idle_rss_mb": ("idle RSS (MB)", "pairwise", "<=", 80.0),
    "startup_s": ("start-up to first answer (s)", "pairwise", "<=", 1.0),
    # Issue 31, the rented link at 40 ms RTT (bench/wan.py; the full run and --phases wan).
    "wan_added_p50_warm_ms": ("rented link 40 ms RTT: added p50, warm (ms)", "pairwise", "<=", 1.0),
    "wan_idle_extra_p50_ms": ("rented link: first after idle, added beyond warm (ms)", "pairwise", "<=", 1.0),
    "wan_handshakes_per_stream": ("rented link: TLS handshakes per concurrent stream", "pairwise", "<=", 1.0),
}


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def value_of(name: str, raw: dict[str, Any], path: str) -> float | None:
    stream = _get(raw, "latency", "stream") or {}
    if name.startswith("added_p50_stream"):
        return added(stream[path], stream["direct"], "p50_ms") if path in stream and "direct" in stream else None
    if name.startswith("cpu_us_per_paced_chunk"):
        return _get(raw, "throughput_paced", path, "cpu_us_per_chunk")
    if name.startswith("unpaced_pct"):
        return _get(raw, "throughput_unpaced", path, "pct_of_direct")
    if name.startswith("p99_ttfb_256"):
        mine, direct = _get(raw, "concurrency", "256", path, "p99_ttfb_ms"), _get(raw, "concurrency", "256", "direct",
                                                                                   "p99_ttfb_ms")
        return round(mine / direct, 2) if mine is not None and direct else None
    if name.startswith("errors_256"):
        return _get(raw, "concurrency", "256", path, "errors")
    if name == "idle_rss_mb":
        return _get(raw, "node", "idle_rss_mb")
    if name == "startup_s":
        return _get(raw, "node", "startup_s")
    if name == "wan_added_p50_warm_ms":
        return _get(raw, "wan", "warm", "added_p50_ms")
    if name == "wan_idle_extra_p50_ms":
        # The node's pool gone cold, the caller's own connection to it kept (bench/wan.py).
        idle = _get(raw, "wan", "after_idle_longer", "added_pool_only_p50_ms")
        warm = _get(raw, "wan", "warm", "added_p50_ms")
        return round(idle - warm, 3) if idle is not None and warm is not None else None
    if name == "wan_handshakes_per_stream":
        return _get(raw, "wan", "bursts", "pairwise_handshakes_per_stream")
    raise KeyError(name)


def evaluate(raw: dict[str, Any], *, prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every target with its value in this run. ``prefix`` measures another set of paths
    (``candidate`` for a ``--candidate`` run: ``pairwise`` becomes ``candidate``)."""
    out: dict[str, dict[str, Any]] = {}
    for name, (description, path, op, target) in TARGETS.items():
        if prefix:
            path = path.replace("pairwise", prefix)
        node_only = name in ("idle_rss_mb", "startup_s") or name.startswith("wan_")
        value = None if prefix and node_only else value_of(name, raw, path)
        met = value is not None and (value <= target if op == "<=" else value >= target)
        out[name] = {"value": value, "target": f"{op} {target:g}", "met": met, "what": description}
    return out


def summary(targets: dict[str, dict[str, Any]]) -> str:
    width = max(len(t["what"]) for t in targets.values())
    lines = ["targets (issues 18 and 31):"]
    for t in targets.values():
        mark = "met" if t["met"] else ("not measured" if t["value"] is None else "MISSED")
        lines.append(f"  {t['what']:<{width}}  {t['value'] if t['value'] is not None else '–':>8}  "
                     f"{t['target']:>8}  {mark}")
    return "\n".join(lines)
