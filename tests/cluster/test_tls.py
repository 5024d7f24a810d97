"""Mutual TLS on the cluster port: real aiohttp server, real httpx client, 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx
import pytest
from aiohttp import web

from app.services.backends.stream_client import StreamClient
from app.services.cluster.tls import (
    PEER_PIN_KEY,
    TlsContexts,
    client_context,
    peer_hostname,
    pin_check_middleware,
    server_context,
)
from app.services.cluster.trust import PeerPin
from app.services.errors import UpstreamError
from tests.cluster.conftest import Node


def pin_of(node: Node) -> PeerPin:
    return PeerPin.create(node.identity.node_id, node.identity.name, node.identity.cert_pem, None)


@dataclass
class Server:
    contexts: TlsContexts
    port: int
    callers: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/whoami"


@pytest.fixture
async def serve(make_node: Callable[[str], Node]) -> AsyncIterator[Callable[[Node], asyncio.Future[Server]]]:
    runners: list[web.AppRunner] = []

    async def start(node: Node) -> Server:
        contexts = TlsContexts(node.identity, node.trust)
        server = Server(contexts, 0)

        async def whoami(request: web.Request) -> web.Response:
            pin: PeerPin = request[PEER_PIN_KEY]
            server.callers.append(pin.node_id)
            return web.json_response({"you": pin.node_id})

        app = web.Application(middlewares=[pin_check_middleware(contexts)])
        app.router.add_route("*", "/whoami", whoami)  # GET for httpx's calls, POST for the relay's stream client
        runner = web.AppRunner(app)
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=contexts.server)
        await site.start()
        server.port = runner.addresses[0][1]
        return server

    yield start  # type: ignore[misc]
    for runner in runners:
        await runner.cleanup()


def client_for(me: Node, peer: Node) -> httpx.AsyncClient:
    return httpx.AsyncClient(verify=client_context(me.identity, pin_of(peer)), timeout=5)


def sni(node: Node) -> dict[str, object]:
    return {"sni_hostname": peer_hostname(node.identity.node_id)}


async def handshake_accepted(server: Node, client: Node) -> bool:
    """Did the server's TLS handshake accept the client? Checked below the HTTP layer."""
    accepted: list[asyncio.StreamWriter] = []

    def on_connection(_: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        accepted.append(w)
        w.write(b"ok")

    srv = await asyncio.start_server(
        on_connection, "127.0.0.1", 0, ssl=server_context(server.identity, server.trust)
    )
    port = srv.sockets[0].getsockname()[1]
    ctx = client_context(client.identity, pin_of(server))
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=ctx, server_hostname=peer_hostname(server.identity.node_id)
    )
    try:
        # TLS 1.3: the client finishes first; the server then either hands the
        # connection to its callback (asyncio does so only after a good handshake),
        # which says "ok", or answers with an alert. Either way this read settles it.
        try:
            data = await asyncio.wait_for(reader.read(2), 5)
        except (ssl.SSLError, ConnectionError):
            data = b""
        assert (data == b"ok") == bool(accepted)
        return bool(accepted)
    finally:
        writer.close()
        for w in accepted:
            w.close()
        srv.close()
        await srv.wait_closed()


async def test_no_pins_refuses_every_client_at_the_handshake(make_node: Callable[[str], Node]) -> None:
    server, client = make_node("server"), make_node("client")
    assert server.trust.all() == []
    assert await handshake_accepted(server, client) is False
    server.trust.add(pin_of(client))
    assert await handshake_accepted(server, client) is True


async def test_pinned_client_accepted_unpinned_refused(make_node: Callable[[str], Node], serve) -> None:  # type: ignore[no-untyped-def]
    a, b, stranger = make_node("a"), make_node("b"), make_node("stranger")
    server = await serve(a)
    async with client_for(b, a) as client:
        with pytest.raises(httpx.TransportError):
            await client.get(server.url, extensions=sni(a))
    a.trust.add(pin_of(b))  # TlsContexts follows the trust store: no restart
    async with client_for(b, a) as client:
        response = await client.get(server.url, extensions=sni(a))
        assert response.json() == {"you": b.identity.node_id}
    async with client_for(stranger, a) as client:
        with pytest.raises(httpx.TransportError):
            await client.get(server.url, extensions=sni(a))
    assert server.callers == [b.identity.node_id]


async def test_removed_pin_refused_on_new_and_kept_alive_connections(
    make_node: Callable[[str], Node],
    serve,  # type: ignore[no-untyped-def]
) -> None:
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    server = await serve(a)
    async with client_for(b, a) as kept:
        assert (await kept.get(server.url, extensions=sni(a))).status_code == 200
        a.trust.remove(b.identity.node_id)
        # Same pooled connection, no new handshake: the per-request pin check refuses it.
        assert (await kept.get(server.url, extensions=sni(a))).status_code == 403
    async with client_for(b, a) as fresh:
        with pytest.raises(httpx.TransportError):
            await fresh.get(server.url, extensions=sni(a))
    assert server.contexts.peer_fingerprint_allowed(None) is False


async def test_hostname_is_checked_as_the_node_uuid(make_node: Callable[[str], Node], serve) -> None:  # type: ignore[no-untyped-def]
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    a.trust.add(pin_of(b))
    server = await serve(a)
    async with client_for(b, a) as client:
        # The pinned cert is right, but it is not issued for c's UUID.
        with pytest.raises(httpx.ConnectError, match="match|mismatch"):
            await client.get(server.url, extensions=sni(c))
        # Without the extension httpx checks "127.0.0.1", which no node cert names.
        with pytest.raises(httpx.ConnectError, match="match|mismatch"):
            await client.get(server.url)
        assert (await client.get(server.url, extensions=sni(a))).status_code == 200


async def test_client_trusts_only_the_peer_it_calls(make_node: Callable[[str], Node], serve) -> None:  # type: ignore[no-untyped-def]
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    a.trust.add(pin_of(b))
    server = await serve(a)
    # b believes it is calling c: a's certificate is not c's pin, whatever name it is asked under.
    async with client_for(b, c) as client:
        with pytest.raises(httpx.ConnectError, match="certificate verify failed"):
            await client.get(server.url, extensions=sni(a))


async def test_relay_stream_client_checks_the_pin_and_the_uuid(make_node: Callable[[str], Node], serve) -> None:  # type: ignore[no-untyped-def]
    """The relay's data-plane client (aiohttp) keeps the same trust as the httpx one."""
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    a.trust.add(pin_of(b))
    server = await serve(a)
    right = StreamClient(client_context(b.identity, pin_of(a)))
    wrong_pin = StreamClient(client_context(b.identity, pin_of(c)))
    try:
        async def relay(client: StreamClient, hostname: str | None) -> bytes:
            opened = await client.open(server.url, json_body={}, headers={}, first_byte_timeout_s=10,
                                       label="node a", server_hostname=hostname)
            await opened.aclose()
            return opened.first_chunk

        assert b.identity.node_id in (await relay(right, peer_hostname(a.identity.node_id))).decode()
        assert server.callers == [b.identity.node_id]
        # The pinned certificate is right, but it is not issued for c's UUID; nor for the bare IP address.
        for hostname in (peer_hostname(c.identity.node_id), None):
            with pytest.raises(UpstreamError, match="could not be reached.*(match|mismatch)"):
                await relay(right, hostname)
        # b believes it is calling c: a's certificate is not c's pin.
        with pytest.raises(UpstreamError, match="could not be reached.*certificate verify failed"):
            await relay(wrong_pin, peer_hostname(a.identity.node_id))
        assert server.callers == [b.identity.node_id]
    finally:
        await right.aclose()
        await wrong_pin.aclose()
