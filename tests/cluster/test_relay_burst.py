"""A burst of relayed streams from a paired peer: every stream gets its own connection at once, opened a
few at a time under the cluster port's handshake budget, while a stranger is still held to that budget.

Real sockets on 127.0.0.1, real mutual TLS with pinned certificates, the cluster port's BudgetedSite
and both of the relay's clients (aiohttp's StreamClient; the splice's, as a peer's warm pool drives it), with
the budget scaled down so the test needs few connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from app.services.backends.base import Opened
from app.services.backends.stream_client import StreamClient
from app.services.cluster.tls import (
    TlsContexts,
    client_context,
    peer_hostname,
    pin_check_middleware,
    resuming_client_context,
)
from app.services.cluster.warm_pool import WarmPool
from app.services.cluster.warm_splice import WarmSplice
from app.services.listener_budget import Budget, BudgetedSite
from tests.cluster.conftest import Node
from tests.cluster.test_tls import pin_of
from tests.harden.test_listener_budget import closed_by_server, until

STREAMS = 40
BUDGET = Budget(total=256, per_address=8, handshake_total=16, handshake_per_address=4, handshake_s=5.0,
                verified_clients_exempt=True)


@pytest.fixture
async def held_streams(make_node: Callable[[str], Node]) -> AsyncIterator[tuple[Node, BudgetedSite, asyncio.Event]]:
    """Node a's cluster port whose handler sends a first chunk and holds the stream until released."""
    a = make_node("a")
    contexts = TlsContexts(a.identity, a.trust)
    release = asyncio.Event()

    async def relay(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"first\n")
        await release.wait()
        await response.write(b"last\n")
        return response

    app = web.Application(middlewares=[pin_check_middleware(contexts)])
    app.router.add_post("/relay", relay)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = BudgetedSite(runner, "127.0.0.1", 0, BUDGET, label="cluster port", ssl_context=contexts.server)
    await site.start()
    yield a, site, release
    release.set()
    await runner.cleanup()


def relay_client(kind: str, a: Node, b: Node, url: str) -> tuple[Callable[[], Awaitable[Opened]],
                                                                 Callable[[], Awaitable[None]]]:
    """(open one relayed stream, close the client) for aiohttp's client or the splice's."""
    opening = BUDGET.handshake_per_address - 1
    if kind == "aiohttp":
        client = StreamClient(client_context(b.identity, pin_of(a)), max_opening=opening)
        return (lambda: client.open(url, json_body={}, headers={}, first_byte_timeout_s=30, label="node a",
                                    server_hostname=peer_hostname(a.identity.node_id))), client.aclose
    pool = WarmPool(resuming_client_context(b.identity, pin_of(a)), a.identity.fingerprint,
                    peer_hostname(a.identity.node_id), "node a")
    splice = WarmSplice(pool, opening=opening, limit=512, connect_timeout_s=5.0)
    return (lambda: splice.open(url, json_body={}, headers={}, first_byte_timeout_s=30, label="node a")), splice.aclose


@pytest.mark.parametrize("kind", ["splice", "aiohttp"])
async def test_a_paired_peer_relays_more_streams_at_once_than_one_address_may_hold_unverified(
        make_node: Callable[[str], Node], held_streams: tuple[Node, BudgetedSite, asyncio.Event], kind: str) -> None:
    a, site, release = held_streams
    b = make_node("b")
    a.trust.add(pin_of(b))
    assert site.bound is not None
    url = f"https://127.0.0.1:{site.bound[1]}/relay"
    open_one, close_client = relay_client(kind, a, b, url)
    try:
        opened = await asyncio.gather(*(open_one() for _ in range(STREAMS)))
        # Every stream is open at once, each on its own connection: five times what one address may hold
        # before its certificate is verified, and none refused.
        assert [o.first_chunk for o in opened] == [b"first\n"] * STREAMS
        assert site.stats()["open"] >= STREAMS and site.refused == 0
        # A stranger from the same address is still held to the handshake budget.
        silent = [await asyncio.open_connection("127.0.0.1", site.bound[1])
                  for _ in range(BUDGET.handshake_per_address)]
        await until(lambda: site.stats()["handshaking"] == BUDGET.handshake_per_address, "the stranger's handshakes")
        reader, writer = await asyncio.open_connection("127.0.0.1", site.bound[1])
        assert await closed_by_server(reader)
        assert site.refused == 1
        release.set()
        rests = [b"".join([chunk async for chunk in o.rest]) for o in opened]
        assert rests == [b"last\n"] * STREAMS
        for o in opened:
            await o.aclose()
        for _, w in [*silent, (reader, writer)]:
            w.close()
    finally:
        await close_client()
