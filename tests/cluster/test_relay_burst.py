"""A burst of relayed streams from a paired peer: every stream gets its own connection at once, opened a
few at a time under the cluster port's handshake budget, while a stranger is still held to that budget.

Real sockets on 127.0.0.1, real mutual TLS with pinned certificates, the cluster port's BudgetedSite
and the relay's StreamClient, with the budget scaled down so the test needs few connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from aiohttp import web

from app.services.backends.stream_client import StreamClient
from app.services.cluster.tls import TlsContexts, client_context, peer_hostname, pin_check_middleware
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


async def test_a_paired_peer_relays_more_streams_at_once_than_one_address_may_hold_unverified(
        make_node: Callable[[str], Node], held_streams: tuple[Node, BudgetedSite, asyncio.Event]) -> None:
    a, site, release = held_streams
    b = make_node("b")
    a.trust.add(pin_of(b))
    assert site.bound is not None
    url = f"https://127.0.0.1:{site.bound[1]}/relay"
    client = StreamClient(client_context(b.identity, pin_of(a)), max_opening=BUDGET.handshake_per_address - 1)
    try:
        opened = await asyncio.gather(*(
            client.open(url, json_body={}, headers={}, first_byte_timeout_s=30, label="node a",
                        server_hostname=peer_hostname(a.identity.node_id)) for _ in range(STREAMS)))
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
        await client.aclose()
