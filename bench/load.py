"""The load client: aiohttp on one asyncio loop, raw bytes, no SDK on the measuring path.

Time to first byte is measured from just before the request is sent to the
first body bytes read (for a stream: the first SSE frame; for a whole answer:
the whole small body, so it is the full round trip). A "chunk" is one SSE frame
(one event ending in a blank line) as the client receives it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp


@dataclass
class Target:
    name: str
    url: str  # base URL; requests go to {url}/v1/chat/completions
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Sample:
    ok: bool
    ttfb_s: float = 0.0
    total_s: float = 0.0
    frames: int = 0
    error: str | None = None
    warm: bool = False  # sent on a connection an earlier request of the same worker opened


def chat_body(model: str, *, stream: bool, max_tokens: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "benchmark prompt"}],
                            "stream": stream}
    if stream:
        # Pairwise asks OpenAI upstreams for usage anyway; asking on every path keeps the frames equal.
        body["stream_options"] = {"include_usage": True}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


def make_session(target: Target, limit: int = 0) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=limit, limit_per_host=0, ttl_dns_cache=None)
    return aiohttp.ClientSession(base_url=target.url, connector=connector, headers=target.headers,
                                 auto_decompress=False, timeout=aiohttp.ClientTimeout(total=120))


async def request(session: aiohttp.ClientSession, body: dict[str, Any]) -> Sample:
    stream = bool(body.get("stream"))
    began = time.perf_counter()
    try:
        async with session.post("/v1/chat/completions", json=body) as response:
            if not stream:
                raw = await response.read()
                done = time.perf_counter()
                if response.status != 200:
                    return Sample(False, error=f"HTTP {response.status}: {raw[:200]!r}")
                return Sample(True, done - began, done - began, 1)
            if response.status != 200:
                raw = await response.read()
                return Sample(False, error=f"HTTP {response.status}: {raw[:200]!r}")
            first = await response.content.readany()
            ttfb = time.perf_counter() - began
            frames, tail, last = first.count(b"\n\n"), first[-1:], first
            while True:
                data = await response.content.readany()
                if not data:
                    break
                # A frame boundary can fall between two reads.
                frames += data.count(b"\n\n") + (1 if tail == b"\n" and data[:1] == b"\n" else 0)
                tail, last = data[-1:], data
            total = time.perf_counter() - began
            if not last.rstrip().endswith(b"[DONE]"):
                return Sample(False, ttfb, total, frames, error="stream ended without [DONE]")
            return Sample(True, ttfb, total, frames)
    except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
        return Sample(False, total_s=time.perf_counter() - began, error=f"{type(exc).__name__}: {exc}")


async def interleaved_latency(targets: list[Target], body: dict[str, Any], count: int,
                              warmup: int = 10) -> dict[str, list[Sample]]:
    """One request at a time, rotating over the targets, so drifting machine load hits every path alike."""
    sessions = {t.name: make_session(t) for t in targets}
    samples: dict[str, list[Sample]] = {t.name: [] for t in targets}
    try:
        for i in range(warmup + count):
            order = targets if i % 2 == 0 else list(reversed(targets))
            for target in order:
                sample = await request(sessions[target.name], body)
                if i >= warmup:
                    samples[target.name].append(sample)
    finally:
        for session in sessions.values():
            await session.close()
    return samples


async def stream_once(target: Target, body: dict[str, Any]) -> Sample:
    async with make_session(target) as session:
        await request(session, {**body, "max_tokens": 4})  # connection warm, upstream pool warm
        return await request(session, body)


async def closed_loop(target: Target, body: dict[str, Any], concurrency: int, duration_s: float,
                      timeout_s: float = 60) -> list[Sample]:
    """`concurrency` workers, each sending one stream after another until the time is up."""
    samples: list[Sample] = []
    deadline = time.perf_counter() + duration_s
    async with make_session(target) as session:
        async def worker() -> None:
            warm = False
            while time.perf_counter() < deadline:
                try:
                    sample = await asyncio.wait_for(request(session, body), timeout_s)
                except TimeoutError:
                    sample = Sample(False, error=f"no complete answer within {timeout_s:g} s")
                sample.warm, warm = warm, True
                samples.append(sample)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples
