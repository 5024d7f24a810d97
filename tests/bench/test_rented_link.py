"""A node's connections to a rented endpoint (app/services/rented/link.py), through a real node and a
real TLS server on 127.0.0.1 that counts its handshakes (bench/wan_server.py): a second request reuses
the first one's connection; the node closes it after its keep-alive and the next request opens one
handshake; an endpoint that closes idle connections first is seen closing, and the next request
connects anew instead of failing on the dead connection; a burst of concurrent streams opens at most
one handshake per stream over two bursts; probes reuse one connection."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.harness import NodeProc, wait_until
from bench.wan import WanServer

KEEPALIVE_S = "2"  # the node's keep-alive here (PAIRWISE_RENTED_KEEPALIVE_S), so it runs out in seconds
BODY = {"messages": [{"role": "user", "content": "hi"}], "stream": True, "max_tokens": 4}


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def serve(stack: ExitStack, tmp_path: Path, name: str, *extra: str) -> WanServer:
    return WanServer(stack, [], "127.0.0.1", tmp_path / name, *extra)


def attach(node: NodeProc, name: str, server: WanServer, model: str) -> None:
    node.cli("rented", "attach", name, "--url", server.url, "--ca-file", server.ca_file, "--model", model)
    wait_until(lambda: model in node.models(), 60, f"the node to list {model}")


def ask(node: NodeProc, model: str) -> None:
    with httpx.stream("POST", f"{node.url}/v1/chat/completions", json={**BODY, "model": model}, timeout=60,
                      trust_env=False) as answer:
        assert answer.status_code == 200, answer.read()
        assert b"[DONE]" in b"".join(answer.iter_raw())


def test_the_node_keeps_reuses_and_retires_its_rented_connections(node_factory: Any, tmp_path: Path,
                                                                 stack: ExitStack) -> None:
    far = serve(stack, tmp_path, "far")
    closing = serve(stack, tmp_path, "closing", "--model", "closing:latest", "--keepalive-s", "0.3")
    node = node_factory("A", env={"PAIRWISE_RENTED_KEEPALIVE_S": KEEPALIVE_S, "PAIRWISE_RENTED_REFRESH_S": "3600"})
    node.start()
    attach(node, "far", far, "tiny:latest")
    attach(node, "closing", closing, "closing:latest")

    ask(node, "tiny:latest")
    opened = far.handshakes()
    ask(node, "tiny:latest")
    assert far.handshakes() == opened and far.stats()["inference_open"] == 1  # the same connection again

    # Past its keep-alive the node closes the connection itself; the next request opens exactly one.
    wait_until(lambda: far.stats()["inference_open"] == 0, 30, "the node to close its idle connection", interval=0.2)
    ask(node, "tiny:latest")
    assert far.handshakes() == opened + 1

    # The endpoint closes idle connections after 0.3 s, well inside the node's keep-alive: the node
    # notices the close and connects anew; no request fails on the dead connection.
    ask(node, "closing:latest")
    for _ in range(3):
        before = closing.handshakes()
        wait_until(lambda: closing.stats()["inference_open"] == 0, 30, "the endpoint to close the idle connection",
                   interval=0.1)
        ask(node, "closing:latest")
        assert closing.handshakes() == before + 1


def test_a_burst_opens_one_handshake_per_stream_at_most_and_probes_reuse_theirs(node_factory: Any, tmp_path: Path,
                                                                                stack: ExitStack) -> None:
    far = serve(stack, tmp_path, "far")
    # Probes every 6 s: longer than httpx's default keep-alive (5 s), which opened a handshake per probe.
    node = node_factory("A", env={"PAIRWISE_RENTED_REFRESH_S": "6"})
    node.start()
    attach(node, "far", far, "tiny:latest")
    far.config(tokens_per_s=20.0)  # each stream takes a fifth of a second, so the burst's streams overlap

    started = far.handshakes()
    seen = {"requests": far.requests(), "changed": time.monotonic(), "rounds": 0}

    def probe_rounds() -> bool:
        now = far.requests()
        if now != seen["requests"]:
            if time.monotonic() - seen["changed"] > 3:  # a round's requests come together, rounds 6 s apart
                seen["rounds"] += 1
            seen["requests"], seen["changed"] = now, time.monotonic()
        return seen["rounds"] >= 2

    wait_until(probe_rounds, 60, "two more rounds of probes", interval=0.2)
    assert far.handshakes() - started <= 1  # the probe client's keep-alive outlives the refresh

    async def burst() -> list[int]:
        async with httpx.AsyncClient(timeout=60, trust_env=False, limits=httpx.Limits(max_connections=None)) as client:
            async def one() -> int:
                body = {**BODY, "model": "tiny:latest"}
                async with client.stream("POST", f"{node.url}/v1/chat/completions", json=body) as answer:
                    await answer.aread()
                    return answer.status_code

            return list(await asyncio.gather(*(one() for _ in range(8))))

    # A pool that keeps what it opened never opens more connections than streams ran at once.
    before = far.handshakes()
    assert asyncio.run(burst()) == [200] * 8
    first = far.handshakes() - before
    assert 1 <= first <= 8
    assert asyncio.run(burst()) == [200] * 8
    assert far.handshakes() - before <= 8
