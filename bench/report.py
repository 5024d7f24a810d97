"""The headline figures (the JSON's top-level keys) and the side-by-side table."""

from __future__ import annotations

from typing import Any

from bench.stats import added, reference_for

PATHS = ("direct", "nginx", "pairwise", "pairwise_2hop", "litellm")
HEADERS = ("", "direct", "nginx", "Pairwise 1 hop", "Pairwise 2 hops", "LiteLLM", "PW÷direct", "PW÷nginx", "PW÷LiteLLM")


def _get(data: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def headline(raw: dict[str, Any]) -> dict[str, Any]:
    """Top-level keys; 'per hop' is the one-hop front door, 'two hops' is the whole relay path."""
    lat = raw.get("latency", {})
    stream = lat.get("stream", {})

    def added_p50(path: str) -> float | None:
        return added(stream[path], reference_for(stream, path), "p50_ms") if path in stream else None

    def figures(path: str, router: dict[str, Any]) -> dict[str, Any]:
        nonstream = lat.get("nonstream", {})
        return {
            "p50_added_per_hop_ms": added_p50(path),
            "p99_added_per_hop_ms": added(stream[path], reference_for(stream, path), "p99_ms")
            if path in stream else None,
            "nonstream_p50_added_ms": added(nonstream[path], reference_for(nonstream, path), "p50_ms")
            if path in nonstream else None,
            "stream_throughput_pct_of_direct": _get(raw, "throughput_paced", path, "pct_of_direct"),
            "unpaced_throughput_pct_of_direct": _get(raw, "throughput_unpaced", path, "pct_of_direct"),
            "cpu_us_per_chunk": _get(raw, "throughput_paced", path, "cpu_us_per_chunk"),
            "errors_at_256_streams": _get(raw, "concurrency", "256", path, "errors"),
            "p99_ttfb_at_256_streams_ms": _get(raw, "concurrency", "256", path, "p99_ttfb_ms"),
            "idle_rss_mb": router.get("idle_rss_mb"),
            "startup_s": router.get("startup_s"),
        }

    out = figures("pairwise", raw.get("node", {}))
    out["p50_added_two_hops_ms"] = added_p50("pairwise_2hop")
    out["two_hops_stream_throughput_pct_of_direct"] = _get(raw, "throughput_paced", "pairwise_2hop", "pct_of_direct")
    litellm = raw.get("litellm_proc")
    out["litellm"] = figures("litellm", litellm) if litellm else None
    return out


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _ratio(a: Any, b: Any) -> str:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or b == 0:
        return "–"
    return f"{a / b:.2f}×"


def table(raw: dict[str, Any]) -> str:
    rows: list[list[str]] = []
    extra = tuple(p for p in raw.get("paths", ()) if p not in PATHS)  # e.g. a candidate under A/B
    paths, headers = PATHS + extra, HEADERS + extra

    def row(label: str, values: dict[str, Any], digits: int = 2, ratios: bool = True) -> None:
        if all(v is None for v in values.values()):
            return  # e.g. no warm samples in a short run
        pw = values.get("pairwise")
        rows.append([label, *(_fmt(values.get(p), digits) for p in PATHS),
                     _ratio(pw, values.get("direct")) if ratios else "–",
                     _ratio(pw, values.get("nginx")) if ratios else "–",
                     _ratio(pw, values.get("litellm")) if ratios else "–",
                     *(_fmt(values.get(p), digits) for p in paths[len(PATHS):])])

    lat = raw.get("latency", {})
    for mode, title in (("stream", "stream"), ("nonstream", "whole answer")):
        data = lat.get(mode, {})
        for q in ("p50", "p99"):
            row(f"{title} TTFB {q} (ms) ↓", {p: _get(data, p, f"{q}_ms") for p in paths})
            row(f"  added by router {q} (ms) ↓",
                {p: added(data[p], reference_for(data, p), f"{q}_ms") for p in paths if p in data and p != "direct"})
    for key, title in (("throughput_paced", "1 stream, paced"), ("throughput_unpaced", "1 stream, unpaced")):
        data = raw.get(key)
        if not data:
            continue
        rate = data.get("tokens_per_s") or "max"
        row(f"{title} @{rate} tok/s (chunks/s) ↑", {p: _get(data, p, "chunks_per_s") for p in paths}, 0)
        row("  % of direct ↑", {p: _get(data, p, "pct_of_direct") for p in paths}, 1)
        row("  router CPU per chunk (µs) ↓", {p: _get(data, p, "cpu_us_per_chunk") for p in paths}, 1)
    conc = raw.get("concurrency", {})
    for level in ("1", "16", "64", "256"):
        if level not in conc:
            continue
        row(f"{level} streams: errors ↓", {p: _get(conc, level, p, "errors") for p in paths}, ratios=False)
        row(f"{level} streams: p99 TTFB (ms) ↓", {p: _get(conc, level, p, "p99_ttfb_ms") for p in paths}, 1)
        row("  warm connections only (ms) ↓", {p: _get(conc, level, p, "p99_warm_ttfb_ms") for p in paths}, 1)
    node, lite = raw.get("node", {}), raw.get("litellm_proc") or {}
    row("start-up to first answer (s) ↓", {"pairwise": node.get("startup_s"), "litellm": lite.get("startup_s")})
    row("idle RSS (MB) ↓", {"pairwise": node.get("idle_rss_mb"), "litellm": lite.get("idle_rss_mb")}, 1)
    widths = [max(len(r[i]) for r in [list(headers), *rows]) for i in range(len(headers))]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths, strict=True)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    return "\n".join(lines)
