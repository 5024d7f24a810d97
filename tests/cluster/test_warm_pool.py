"""Warm relay connections and TLS session resumption to a peer (cluster/warm_pool.py, tls_sessions.py).

Every test runs on both of the relay's clients: pass-through streams on the splice's connections
(``warm_splice.py``, the default) and aiohttp's (``PAIRWISE_SPLICE=off``); the pool's rules are the same.
Real cluster ports (``ClusterServer``: the budgeted TLS listener, mutual TLS against pins, the
per-request pin check) on 127.0.0.1, and the real relay client (``PeerClient``). Nothing here is
timed: each step waits for the state it needs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from app.environment import reread_environment
from app.services.backends.base import Opened
from app.services.cluster import peer_client, warm_pool
from app.services.cluster.facts import LoadBook, load_doc
from app.services.cluster.identity import peer_hostname
from app.services.cluster.peer_client import PeerClient
from app.services.cluster.peers import PeerManager
from app.services.cluster.server import ClusterHandlers, ClusterServer
from app.services.cluster.tls import PEER_PIN_KEY, TlsContexts, resuming_client_context
from app.services.cluster.tls_sessions import check_pin
from app.services.cluster.trust import PeerPin, TrustStore
from app.services.errors import UpstreamCut, UpstreamError, UpstreamTimeout
from app.services.events import EventBus
from tests.cluster.conftest import Node, forge_identity


def pin_of(node: Node, address: str | None = None) -> PeerPin:
    return PeerPin.create(node.identity.node_id, node.identity.name, node.identity.cert_pem, address)


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for a state (never for a time): checked every few milliseconds, 30 s at most."""
    for _ in range(3000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


@dataclass
class Port:
    """A cluster port whose relay answers one chunk, then the rest once ``go`` is set."""

    node: Node
    server: ClusterServer
    go: asyncio.Event = field(default_factory=asyncio.Event)
    relayed: list[tuple[str, bool]] = field(default_factory=list)  # (caller's node id, TLS session resumed)

    @property
    def address(self) -> str:
        return self.server.address

    def open_connections(self) -> int:
        site = self.server.site
        assert site is not None
        return len(site.connections)


@pytest.fixture
async def cluster_port(make_node: Callable[[str], Node]) -> AsyncIterator[Callable[[Node], Any]]:
    servers: list[ClusterServer] = []
    ports: list[Port] = []

    async def start(node: Node, listen: str = "127.0.0.1:0") -> Port:
        contexts = TlsContexts(node.identity, node.trust)
        port: list[Port] = []

        async def relay(request: web.Request) -> web.StreamResponse:
            transport = request.transport
            assert transport is not None
            ssl_object = transport.get_extra_info("ssl_object")
            port[0].relayed.append((request[PEER_PIN_KEY].node_id, ssl_object.session_reused))
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(b"data: first\n\n")
            await port[0].go.wait()
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            return response

        async def unpair(_: PeerPin) -> None:
            return None

        handlers = ClusterHandlers(
            facts=lambda: {"id": node.identity.node_id, "name": node.identity.name},
            inventory=lambda: {"id": node.identity.node_id, "name": node.identity.name, "models": [],
                               "load": load_doc([], LoadBook())},
            relay=relay, receive_jobs=lambda _pin, _records: {"accepted": 0}, unpair=unpair,
            heard_from=lambda _pin, _host, _port: None)
        server = ClusterServer(contexts, handlers, max_body_bytes=1 << 20)
        await server.start(listen)
        servers.append(server)
        port.append(Port(node, server))
        ports.append(port[0])
        return port[0]

    yield start
    for port in ports:
        port.go.set()  # no relay handler left waiting
    for server in servers:
        await server.stop()
        server.contexts.close()


@pytest.fixture(autouse=True, params=["splice", "aiohttp"])
def relay_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which client carries the relayed streams (the clients made in the test read it)."""
    monkeypatch.setenv("PAIRWISE_SPLICE", "on" if request.param == "splice" else "off")
    reread_environment()
    return str(request.param)


async def open_stream(client: PeerClient) -> Opened:
    return await client.open_relay({"model": "m"}, {}, first_byte_timeout_s=30, idle_timeout_s=30, pass_through=True)


def streams_set(client: PeerClient) -> warm_pool.WarmConnections:
    connections = client.pool.streams
    assert connections is not None
    return connections


@pytest.fixture
async def clients() -> AsyncIterator[list[PeerClient]]:
    made: list[PeerClient] = []
    yield made
    for client in made:
        await client.aclose()


def client_to(me: Node, port: Port, made: list[PeerClient]) -> PeerClient:
    client = PeerClient(me.identity, pin_of(port.node, port.address), {})
    made.append(client)
    return client


async def relay_streams(client: PeerClient, port: Port, count: int) -> None:
    """``count`` relayed streams open at once (each holding its own connection), then read to their end."""
    port.go.clear()
    opened: list[Opened] = list(await asyncio.gather(*(open_stream(client) for _ in range(count))))
    assert all(o.first_chunk.startswith(b"data: first") for o in opened)
    assert client.pool.demand.in_flight == count
    port.go.set()
    for o in opened:
        rest = b"".join([chunk async for chunk in o.rest])
        assert rest.endswith(b"[DONE]\n\n")
        await o.aclose()
    assert client.pool.demand.in_flight == 0


def idle(client: PeerClient) -> int:
    return client.pool.row()["idle"]


async def test_the_pool_keeps_a_bursts_connections_and_resumes_new_ones(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], clients: list[PeerClient]) -> None:
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    port: Port = await cluster_port(a)
    client = client_to(b, port, clients)

    # Peer-up: the spares are opened ahead, with full handshakes (nothing to resume yet).
    client.keep_warm()
    await until(lambda: idle(client) == warm_pool.WARM_MIN, "the spares opened at peer-up")
    assert client.pool.row()["handshakes_full"] == warm_pool.WARM_MIN
    await until(lambda: client.pool.context.sessions.offer() is not None, "the peer's ticket kept")

    # A burst of 10 takes the 2 warm connections and opens 8, each resuming the peer's session.
    await relay_streams(client, port, 10)
    row = client.pool.row()
    assert (row["handshakes_full"], row["handshakes_resumed"], row["refused"]) == (warm_pool.WARM_MIN, 8, 0)
    assert [resumed for _, resumed in port.relayed].count(True) == 8
    assert {caller for caller, _ in port.relayed} == {b.identity.node_id}  # the pin check read every one
    # Every connection is kept for the next burst: the target follows the burst's peak.
    await until(lambda: idle(client) == 10, "the burst's connections kept idle")
    assert (row["peak_in_flight"], client.pool.row()["target"]) == (10, 10)
    client.keep_warm()  # nothing missing, nothing above the target
    assert idle(client) == 10 and port.open_connections() == 10

    # The next burst of the same size opens nothing.
    await relay_streams(client, port, 10)
    assert client.pool.row()["handshakes_full"] + client.pool.row()["handshakes_resumed"] == 10


async def test_missing_connections_are_reopened_and_extra_ones_closed_as_demand_falls(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], clients: list[PeerClient],
        monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    port: Port = await cluster_port(a)
    client = client_to(b, port, clients)
    await relay_streams(client, port, 6)
    await until(lambda: idle(client) == 6, "the burst's connections kept")
    connector = streams_set(client)
    assert connector.trim(3) == 3  # as if the peer had closed three of them
    client.keep_warm()
    await until(lambda: idle(client) == 6, "the missing connections reopened in the background")
    assert client.pool.row()["handshakes_resumed"] >= 3

    # The burst is no longer recent: the pool shrinks to what an online peer keeps.
    monkeypatch.setattr(client.pool.demand, "window_s", 0.0)
    monkeypatch.setattr(warm_pool, "BUCKET_S", 0.0)
    assert client.pool.target() == warm_pool.WARM_MIN
    client.keep_warm()
    assert idle(client) == warm_pool.WARM_MIN
    await until(lambda: port.open_connections() == warm_pool.WARM_MIN, "the cluster port saw them close")


async def test_idle_connections_are_reaped_before_the_peers_server_lets_go(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], clients: list[PeerClient]) -> None:
    # Both sides' keep-alive: the cluster port says how long it keeps an idle connection, and the
    # pool keeps one for less (aiohttp's shortest server default when a peer does not say).
    assert load_doc([], LoadBook())["keepalive_s"] == warm_pool.SERVER_KEEPALIVE_S
    for told in (warm_pool.SERVER_KEEPALIVE_S, None, 75.0, 20.0, 3630.0):
        server_keeps = told or warm_pool.UNTOLD_SERVER_KEEPALIVE_S
        assert 0 < warm_pool.client_keepalive_s(told) < server_keeps

    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    port: Port = await cluster_port(a)
    client = client_to(b, port, clients)
    client.pool.server_keepalive(2.0)  # a peer that keeps idle connections 2 s: ours go after 1 s
    assert client.pool.keepalive_s == 1.0
    await relay_streams(client, port, 4)
    assert port.open_connections() == 4
    await until(lambda: port.open_connections() == 0, "the idle connections reaped by the client")
    assert idle(client) == 0
    # The next request opens a new connection (resuming the session) and is answered.
    shakes = client.pool.row()["handshakes_full"] + client.pool.row()["handshakes_resumed"]
    await relay_streams(client, port, 1)
    assert client.pool.row()["handshakes_full"] + client.pool.row()["handshakes_resumed"] == shakes + 1


async def test_a_resumed_session_carries_the_peers_certificate_and_is_checked_against_the_pin(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], clients: list[PeerClient],
        tmp_path: Path) -> None:
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    port: Port = await cluster_port(a)
    host, _, number = port.address.rpartition(":")
    forged = forge_identity(tmp_path / "forged", a.identity.node_id, "a")  # a's UUID, another key

    # Below the HTTP layer: a resumed connection still shows the certificate of the full handshake.
    context = resuming_client_context(b.identity, pin_of(a))
    reused, kept = [], []
    for _ in range(2):
        _, writer = await asyncio.open_connection(host, int(number), ssl=context,
                                                  server_hostname=peer_hostname(a.identity.node_id))
        ssl_object = writer.get_extra_info("ssl_object")
        reused.append(ssl_object.session_reused)
        kept.append(check_pin(ssl_object, a.identity.fingerprint))
        assert not check_pin(ssl_object, forged.fingerprint)
        await until(lambda so=ssl_object: so.session is not None and so.session.has_ticket, "the ticket")
        context.sessions.keep(ssl_object)
        writer.close()
    assert reused == [False, True] and kept == [True, True]

    # Through the pool: a session is held, then the identity expected is another one (as when a pin
    # changes under a kept session): the resumed connection is refused before any request goes out.
    client = client_to(b, port, clients)
    client.keep_warm()
    await until(lambda: client.pool.context.sessions.offer() is not None, "a session to resume")
    connector = streams_set(client)
    connector.trim(0)
    client.pool.fingerprint = forged.fingerprint
    with pytest.raises(UpstreamError, match="could not be reached.*pinned certificate"):
        await open_stream(client)
    row = client.pool.row()
    assert row["refused"] == 1 and not row["session_cached"]
    assert port.relayed == []


async def test_an_impostor_at_the_peers_address_gets_neither_the_session_nor_a_request(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], clients: list[PeerClient],
        tmp_path: Path) -> None:
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    real: Port = await cluster_port(a)
    client = client_to(b, real, clients)
    await relay_streams(client, real, 1)
    await until(lambda: client.pool.context.sessions.offer() is not None, "a session with the real peer")
    address = real.address
    await real.server.stop()
    connector = streams_set(client)
    connector.trim(0)

    # Another process claims a's UUID with its own key, on the same port; b still pins a's certificate.
    forged = forge_identity(tmp_path / "forged", a.identity.node_id, "a")
    impostor_node = Node(forged, TrustStore(tmp_path / "impostor-trust.json"))
    impostor_node.trust.add(pin_of(b))
    impostor: Port = await cluster_port(impostor_node, address)  # the address b knows
    # b offers its session; the impostor cannot open it, so the handshake is a full one, and its
    # certificate is not the pin.
    with pytest.raises(UpstreamError, match="could not be reached.*certificate verify failed"):
        await open_stream(client)
    assert impostor.relayed == []
    assert not client.pool.row()["session_cached"]  # the session is not offered there again


async def test_a_pin_gone_voids_every_ticket_the_cluster_port_issued(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], clients: list[PeerClient]) -> None:
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    port: Port = await cluster_port(a)
    client = client_to(b, port, clients)
    await relay_streams(client, port, 1)
    await until(lambda: client.pool.context.sessions.offer() is not None, "a session")
    connector = streams_set(client)
    connector.trim(0)
    await relay_streams(client, port, 1)
    assert [resumed for _, resumed in port.relayed] == [False, True]

    # a unpairs b and pairs it again (same certificate): b's ticket no longer opens a session there.
    a.trust.remove(b.identity.node_id)
    a.trust.add(pin_of(b))
    connector.trim(0)
    await relay_streams(client, port, 1)
    assert [resumed for _, resumed in port.relayed] == [False, True, False]

    # Unpaired: the handshake is refused, ticket or not.
    a.trust.remove(b.identity.node_id)
    connector.trim(0)
    with pytest.raises(UpstreamError, match="could not be reached"):
        await open_stream(client)
    assert len(port.relayed) == 3


@pytest.mark.parametrize("change", ["unpaired", "re-pinned"])
async def test_an_unpaired_or_re_pinned_peer_loses_its_pool_and_sessions_at_once(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], tmp_path: Path, change: str) -> None:
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    port: Port = await cluster_port(a)
    b.trust.add(pin_of(a, port.address))
    manager = PeerManager(b.identity, b.trust, EventBus(), {}, tmp_path / "manual.json")
    manager.start()
    try:
        peer = manager.peers[a.identity.node_id]
        await until(lambda: peer.online, "a online")
        client = peer.client
        # Peer-up opened the spares, and their session is kept.
        await until(lambda: idle(client) >= warm_pool.WARM_MIN, "spares at peer-up")
        await until(lambda: client.pool.context.sessions.offer() is not None, "a session")
        port.go.clear()
        streaming = await open_stream(client)
        streams_open = port.open_connections()

        if change == "unpaired":
            b.trust.remove(a.identity.node_id)
        else:
            forged = forge_identity(tmp_path / "forged", a.identity.node_id, "a")
            b.trust.add(PeerPin.create(a.identity.node_id, "a", forged.cert_pem, port.address))
        # At once, in the same step as the trust change: nothing to resume, nothing to reuse.
        assert client.pool.dropped and not client.pool.context.sessions.enabled
        assert client.pool.context.sessions.offer() is None and client.pool.row()["target"] == 0
        assert manager.peers.get(a.identity.node_id) is not peer
        with pytest.raises(UpstreamError, match="no longer paired"):
            await open_stream(client)
        # Its connections close, the stream under way with them: cut now, not after its idle timeout.
        with pytest.raises(UpstreamCut, match="cut the stream"):
            async for _ in streaming.rest:
                pass
        await streaming.aclose()
        await until(lambda: idle(client) == 0, "the pool emptied")
        # Only a re-pinned peer's new client may connect again (and is refused: the certificate differs).
        assert streams_open >= warm_pool.WARM_MIN + 1
        await until(lambda: port.open_connections() == 0, "every connection of the old client closed")
    finally:
        await manager.stop()


async def test_streams_beyond_the_peers_connection_limit_wait_for_one_to_end(
        make_node: Callable[[str], Node], cluster_port: Callable[[Node], Any], clients: list[PeerClient],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peer_client, "RELAY_CONNECTIONS_PER_PEER", 3)  # the peer's port admits 512 in all
    a, b = make_node("a"), make_node("b")
    a.trust.add(pin_of(b))
    port: Port = await cluster_port(a)
    client = client_to(b, port, clients)
    port.go.clear()
    held = [await open_stream(client) for _ in range(3)]
    # A fourth waits for a connection within its first-byte budget, and is never sent.
    with pytest.raises(UpstreamTimeout):
        await client.open_relay({"model": "m"}, {}, first_byte_timeout_s=0.2, idle_timeout_s=30, pass_through=True)
    assert len(port.relayed) == 3
    port.go.set()
    for opened in held:
        assert b"".join([chunk async for chunk in opened.rest]).endswith(b"[DONE]\n\n")
        await opened.aclose()
    after = await open_stream(client)  # a stream that ended made room
    assert after.first_chunk.startswith(b"data: first")
    await after.aclose()
    assert len(port.relayed) == 4
