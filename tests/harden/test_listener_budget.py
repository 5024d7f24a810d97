"""The connection budget itself, on a small scale: real sockets on 127.0.0.1, an aiohttp app behind
``BudgetedSite`` with a budget of a few connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from aiohttp import web

from app.services.listener_budget import Budget, BudgetedSite
from app.simulator.ca import client_ssl_context, generate_tls, server_ssl_context


async def hello(request: web.Request) -> web.Response:
    return web.Response(text="hello")


@pytest.fixture
async def runner() -> AsyncIterator[web.AppRunner]:
    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    yield runner
    await runner.cleanup()


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    return await asyncio.wait_for(reader.read(), 30) == b""


async def until(predicate: Callable[[], bool], what: str) -> None:
    """Poll a state on the loop, with a generous deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def test_a_full_front_door_closes_its_oldest_idle_connection(runner: web.AppRunner) -> None:
    site = BudgetedSite(runner, "127.0.0.1", 0, Budget(total=4, evict_idle=True), label="front door")
    await site.start()
    assert site.bound is not None
    port = site.bound[1]
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(4)]
    await until(lambda: site.stats()["open"] == 4, "four connections admitted")
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 30)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"hello")
    assert await closed_by_server(idle[0][0])  # the oldest idle one made room
    assert site.stats()["evicted"] >= 1
    for _, w in idle:
        w.close()
    writer.close()


async def test_a_tls_listener_refuses_handshakes_over_the_per_address_cap(runner: web.AppRunner,
                                                                          tmp_path: Path) -> None:
    files = generate_tls(tmp_path)
    context = server_ssl_context(files)
    budget = Budget(total=16, per_address=16, handshake_total=16, handshake_per_address=2, handshake_s=1.0)
    site = BudgetedSite(runner, "127.0.0.1", 0, budget, label="cluster port", ssl_context=context)
    await site.start()
    assert site.bound is not None
    port = site.bound[1]
    silent = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]  # never say ClientHello
    await until(lambda: site.stats()["handshaking"] == 2, "two handshakes in flight")
    third_reader, third_writer = await asyncio.open_connection("127.0.0.1", port)
    assert await closed_by_server(third_reader)  # over the cap: closed at once
    # The silent ones end at the handshake deadline, and a real client gets in.
    await until(lambda: site.stats()["handshaking"] == 0, "the handshake deadline")
    client = client_ssl_context(files.ca_file)
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client, server_hostname="localhost")
    writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert (await asyncio.wait_for(reader.read(), 30)).endswith(b"hello")
    for _, w in [*silent, (third_reader, third_writer)]:
        w.close()
    writer.close()
