"""The measuring phases. Each takes the running processes and returns plain JSON-able figures.

Paths (targets) are named: "direct" (client -> tiny), "pairwise" (client -> node A -> tiny),
"pairwise_2hop" (client -> node B -> mutual TLS -> node A -> tiny) and "litellm"
(client -> LiteLLM proxy -> tiny). Each path's router processes are the pids
whose CPU is charged to it.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from app.harness import TinyProc
from bench.load import Sample, Target, chat_body, closed_loop, interleaved_latency, stream_once
from bench.readings import cpu_seconds
from bench.stats import latency_summary, ms, percentile


@dataclass
class Path:
    target: Target
    router_pids: list[int] = field(default_factory=list)
    tree: bool = False  # LiteLLM may fork workers: count its whole process tree


@dataclass
class Settings:
    latency_requests: int
    throughput_repeats: int
    paced_chunks: int
    paced_tokens_per_s: float
    unpaced_chunks: int
    # An unpaced stream puts three busy processes (engine, router, client) on two cores, so one
    # stream's rate is whichever of them the scheduler favoured; the median of many is the row.
    unpaced_repeats: int
    levels: tuple[int, ...]
    level_duration_s: float
    level_tokens: int
    level_tokens_per_s: float
    # LiteLLM's proxy takes 13 s for a wave of 256 streams (66x direct), a fifth of a short run that
    # must stay under a minute; a short run stops it at this level (0: every level, as a full run).
    litellm_max_streams: int = 0


QUICK = Settings(latency_requests=40, throughput_repeats=1, paced_chunks=400, paced_tokens_per_s=1000,
                 unpaced_chunks=1500, unpaced_repeats=1, levels=(1, 64, 256), level_duration_s=0.5, level_tokens=8,
                 level_tokens_per_s=20, litellm_max_streams=64)
FULL = Settings(latency_requests=1000, throughput_repeats=3, paced_chunks=3000, paced_tokens_per_s=1000,
                unpaced_chunks=30000, unpaced_repeats=9, levels=(1, 16, 64, 256), level_duration_s=5.0, level_tokens=20,
                level_tokens_per_s=20)
# For the smoke test: every phase and path once, in seconds.
SMOKE = Settings(latency_requests=5, throughput_repeats=1, paced_chunks=50, paced_tokens_per_s=1000,
                 unpaced_chunks=200, unpaced_repeats=1, levels=(1, 4), level_duration_s=0.2, level_tokens=4, level_tokens_per_s=50)


def router_cpu(path: Path) -> float:
    return sum(cpu_seconds(pid, tree=path.tree) for pid in path.router_pids)


# Paths whose work outlasts their answer get a rotation of their own, beside direct: LiteLLM's proxy
# spends ~32 ms of CPU per streamed request and ~2.3 ms more in the 200 ms after it answered (its
# callbacks), which in a shared rotation lands in the next paths' samples. Measured on 2026-12-06 with
# 1,000 requests per path: with LiteLLM in the rotation, direct's p50 rose 0.49 -> 0.65 ms and Pairwise's
# added p50 0.98 -> 1.33 ms (bench/README.md, "The quiet full run of 2026-12-06").
APART = ("litellm",)


def latency(paths: dict[str, Path], model: str, settings: Settings) -> dict[str, Any]:
    """Sequential requests, interleaved over the paths: stream and whole-answer time to first byte.

    A path in ``APART`` is measured in its own rotation with direct; that rotation's direct is kept as
    ``direct_beside_<path>``, the reference its added time is taken against (``stats.reference_for``)."""
    out: dict[str, Any] = {}
    shared = [p.target for name, p in paths.items() if name not in APART]
    apart = [p.target for name, p in paths.items() if name in APART]
    direct = next((t for t in shared if t.name == "direct"), None)
    warmup = min(10, settings.latency_requests)
    for mode, stream in (("stream", True), ("nonstream", False)):
        body = chat_body(model, stream=stream, max_tokens=8)
        samples = asyncio.run(interleaved_latency(shared, body, settings.latency_requests, warmup))
        out[mode] = {name: latency_summary(found) for name, found in samples.items()}
        for target in apart:
            pair = [direct, target] if direct is not None else [target]
            found = asyncio.run(interleaved_latency(pair, body, settings.latency_requests, warmup))
            out[mode][target.name] = latency_summary(found[target.name])
            if direct is not None:
                out[mode][f"direct_beside_{target.name}"] = latency_summary(found["direct"])
    return out



def throughput(paths: dict[str, Path], tiny: TinyProc, model: str, settings: Settings, *, paced: bool) -> dict[str, Any]:
    """One long stream at a time per path; chunks per second and router CPU per chunk."""
    tiny.config(tokens_per_s=settings.paced_tokens_per_s if paced else 0.0)
    chunks = settings.paced_chunks if paced else settings.unpaced_chunks
    body = chat_body(model, stream=True, max_tokens=chunks)
    rates: dict[str, list[float]] = {name: [] for name in paths}
    cpu: dict[str, float] = dict.fromkeys(paths, 0.0)
    frames: dict[str, int] = dict.fromkeys(paths, 0)
    errors: dict[str, list[str]] = {name: [] for name in paths}
    names = list(paths)
    repeats = settings.throughput_repeats if paced else settings.unpaced_repeats
    for repeat in range(repeats):
        for name in names if repeat % 2 == 0 else list(reversed(names)):
            path = paths[name]
            before = router_cpu(path)
            sample: Sample = asyncio.run(stream_once(path.target, body))
            cpu[name] += router_cpu(path) - before
            if not sample.ok:
                errors[name].append(sample.error or "failed")
                continue
            frames[name] += sample.frames
            rates[name].append(sample.frames / sample.total_s)
    tiny.config(tokens_per_s=0.0)
    result: dict[str, Any] = {"chunks_per_stream": chunks, "tokens_per_s": settings.paced_tokens_per_s if paced else 0}
    for name in names:
        rate = statistics.median(rates[name]) if rates[name] else None
        result[name] = {
            "chunks_per_s": round(rate, 1) if rate else None,
            "cpu_us_per_chunk": round(cpu[name] / frames[name] * 1e6, 1) if frames[name] and paths[name].router_pids else None,
            "cpu_s": round(cpu[name], 2), "chunks": frames[name], "errors": errors[name],
        }
    direct = result.get("direct", {}).get("chunks_per_s")
    for name in names:
        rate = result[name]["chunks_per_s"]
        result[name]["pct_of_direct"] = round(100 * rate / direct, 1) if rate and direct else None
    return result


def concurrency(paths: dict[str, Path], tiny: TinyProc, model: str, settings: Settings) -> dict[str, Any]:
    """Closed loop at each level: that many streams open at once, each paced like a busy engine."""
    tiny.config(tokens_per_s=settings.level_tokens_per_s)
    body = chat_body(model, stream=True, max_tokens=settings.level_tokens)
    result: dict[str, Any] = {"stream_tokens": settings.level_tokens, "tokens_per_s": settings.level_tokens_per_s,
                              "duration_s": settings.level_duration_s}
    try:
        for level in settings.levels:
            row: dict[str, Any] = {}
            for name, path in paths.items():
                if name == "litellm" and settings.litellm_max_streams and level > settings.litellm_max_streams:
                    continue
                began = time.perf_counter()
                samples = asyncio.run(closed_loop(path.target, body, level, settings.level_duration_s))
                elapsed = time.perf_counter() - began
                ok = [s.ttfb_s for s in samples if s.ok]
                warm = [s.ttfb_s for s in samples if s.ok and s.warm]
                errors = [s.error for s in samples if not s.ok]
                row[name] = {
                    "requests": len(samples), "errors": len(errors), "first_error": errors[0] if errors else None,
                    "p50_ttfb_ms": ms(percentile(ok, 50)) if ok else None,
                    "p99_ttfb_ms": ms(percentile(ok, 99)) if ok else None,
                    # Without each worker's first request, which also pays for a new connection
                    # (for the relay: a new mutual-TLS handshake between the nodes).
                    "p99_warm_ttfb_ms": ms(percentile(warm, 99)) if warm else None,
                    "streams_per_s": round(len(ok) / elapsed, 1),
                }
            result[str(level)] = row
    finally:
        tiny.config(tokens_per_s=0.0)
    return result
