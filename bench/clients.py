"""`python -m bench.clients`: the data plane's client candidates side by side, in one run.

Against one tiny model server (its own process), from one asyncio loop, with the same
open-a-stream contract the node uses (first chunk read before returning, then the rest):

* ``httpx``: ``httpx.AsyncClient`` with ``http_open.open_stream`` (main before the change);
* ``httpx-aiohttp``: the same httpx client and ``open_stream`` over ``httpx_aiohttp.AiohttpTransport``;
* ``aiohttp``: ``backends.stream_client.StreamClient`` (aiohttp's client directly).

Rounds rotate over the clients, so load on the machine hits each the same. Figures are this
process's CPU (``time.process_time``: the client's own work; tiny runs elsewhere) per request
and per chunk, and wall time per request. Writes bench/results/clients.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from app.harness import REPO, TinyProc
from app.services.backends.base import Opened
from app.services.backends.http_open import FAILOVER_STATUSES, error_text
from app.services.backends.stream_client import StreamClient
from app.services.errors import UpstreamError, UpstreamTimeout
from app.services.outbound import make_client, outbound_ssl_context

MODEL = "tiny:latest"
Opener = Callable[[dict[str, Any]], Awaitable[Opened]]


# -- httpx, as the data plane used it before (control-plane calls still use httpx) ----------------------------

async def open_stream(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json_body: dict[str, Any] | None,
    headers: dict[str, str],
    first_byte_timeout_s: float,
    label: str,
    retry_statuses: frozenset[int] = FAILOVER_STATUSES,
    extensions: dict[str, Any] | None = None,
) -> Opened:
    request = client.build_request(method, url, json=json_body, headers=headers, extensions=extensions or {})
    response: httpx.Response | None = None
    try:
        async with asyncio.timeout(first_byte_timeout_s):
            response = await client.send(request, stream=True)
            if response.status_code in retry_statuses:
                body = await response.aread()
                raise UpstreamError(
                    f"{label} answered {response.status_code}: {error_text(body)}",
                    status=response.status_code,
                )
            iterator = response.aiter_raw()
            first = b""
            async for chunk in iterator:
                if chunk:
                    first = chunk
                    break
    except TimeoutError as exc:
        if response is not None:
            await response.aclose()
        raise UpstreamTimeout(f"{label} sent nothing within {first_byte_timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        if response is not None:
            await response.aclose()
        raise UpstreamError(f"{label} could not be reached: {type(exc).__name__}: {exc}") from exc
    except BaseException:
        if response is not None:
            await response.aclose()
        raise
    return Opened(
        status=response.status_code,
        content_type=response.headers.get("content-type", "application/json"),
        first_chunk=first,
        rest=_rest(iterator),
        closer=response.aclose,
        headers=dict(response.headers),
    )


async def _rest(iterator: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for chunk in iterator:
        if chunk:
            yield chunk


def body(tokens: int) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "max_tokens": tokens, "stream_options": {"include_usage": True}}


async def drain(opened: Opened) -> int:
    """Reads the stream to its end; the number of SSE frames (tokens) it carried."""
    frames = opened.first_chunk.count(b"\n\n")
    try:
        async for chunk in opened.rest:
            frames += chunk.count(b"\n\n")  # a boundary split across reads is rare and costs one frame
    finally:
        await opened.aclose()
    return frames


async def sequential(open_: Opener, n: int) -> tuple[float, float]:
    """CPU µs and median wall ms per short streamed request."""
    walls = []
    cpu = time.process_time()
    for _ in range(n):
        began = time.perf_counter()
        await drain(await open_(body(8)))
        walls.append(time.perf_counter() - began)
    return (time.process_time() - cpu) / n * 1e6, statistics.median(walls) * 1e3


async def long_stream(open_: Opener, chunks: int) -> tuple[float, float]:
    """CPU µs per SSE frame and frames/s for one unpaced stream."""
    cpu, began = time.process_time(), time.perf_counter()
    frames = await drain(await open_(body(chunks)))
    return (time.process_time() - cpu) / frames * 1e6, frames / (time.perf_counter() - began)


async def concurrent(open_: Opener, streams: int, rounds: int) -> tuple[float, float]:
    """CPU µs per request and wall ms per wave, ``streams`` short streams at once."""
    async def one() -> int:
        return await drain(await open_(body(8)))

    cpu, began = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        await asyncio.gather(*(one() for _ in range(streams)))
    return (time.process_time() - cpu) / (streams * rounds) * 1e6, (time.perf_counter() - began) / rounds * 1e3


async def measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    context = outbound_ssl_context()
    target = url + "/v1/chat/completions"
    plain = make_client(read_timeout_s=300.0)
    plain.headers.clear()
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=1024, limit_per_host=0),
                                    trust_env=False, auto_decompress=False)
    over_aiohttp = httpx.AsyncClient(transport=AiohttpTransport(client=session), trust_env=False,
                                     timeout=httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=30.0))
    direct = StreamClient(context)

    def via_httpx(client: httpx.AsyncClient) -> Opener:
        return lambda b: open_stream(client, "POST", target, json_body=b, headers={}, first_byte_timeout_s=60,
                                     label="tiny")

    clients: dict[str, Opener] = {
        "httpx": via_httpx(plain),
        "httpx-aiohttp": via_httpx(over_aiohttp),
        "aiohttp": lambda b: direct.open(target, json_body=b, headers={}, first_byte_timeout_s=60, label="tiny"),
    }
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in clients}

    def add(name: str, key: str, value: float) -> None:
        figures[name].setdefault(key, []).append(value)

    for open_ in clients.values():  # warm: connections, imports
        await sequential(open_, 5)
    for round_ in range(args.rounds):
        order = list(clients) if round_ % 2 == 0 else list(reversed(clients))
        for name in order:
            cpu, wall = await sequential(clients[name], args.requests)
            add(name, "request_cpu_us", cpu)
            add(name, "request_wall_ms", wall)
            cpu, rate = await long_stream(clients[name], args.chunks)
            add(name, "chunk_cpu_us", cpu)
            add(name, "chunks_per_s", rate)
            cpu, wall = await concurrent(clients[name], args.streams, 3)
            add(name, f"concurrent_{args.streams}_cpu_us_per_request", cpu)
            add(name, f"concurrent_{args.streams}_wave_ms", wall)
    await plain.aclose()
    await over_aiohttp.aclose()
    await session.close()
    await direct.aclose()
    return {name: {k: round(statistics.median(v), 1) for k, v in rows.items()} for name, rows in figures.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.clients", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="sequential short streams per round")
    parser.add_argument("--chunks", type=int, default=5000, help="chunks of the unpaced stream")
    parser.add_argument("--streams", type=int, default=128, help="streams at once in the concurrent wave")
    args = parser.parse_args(argv)
    tiny = TinyProc("--api", "openai", "--model", MODEL, "--reply-tokens", "1000000")
    tiny.config(tokens_per_s=0.0)  # unpaced: the client is the bottleneck
    load = os.getloadavg()
    try:
        result = asyncio.run(measure(tiny.url, args))
    finally:
        tiny.stop()
    result["loadavg"] = {"start": load[0], "end": os.getloadavg()[0]}
    out = REPO / "bench" / "results" / "clients.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    keys = list(result["aiohttp"])
    print(f"{'':42}" + "".join(f"{name:>15}" for name in ("httpx", "httpx-aiohttp", "aiohttp")))
    for key in keys:
        print(f"{key:42}" + "".join(f"{result[name][key]:>15}" for name in ("httpx", "httpx-aiohttp", "aiohttp")))
    print(f"load average {load[0]:.2f} at start, {result['loadavg']['end']:.2f} at end; raw: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
