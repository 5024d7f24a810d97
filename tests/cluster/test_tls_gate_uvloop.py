"""The cluster port's TLS gate on uvloop (the headless node's loop): a ClientHello that arrives
together with the accept still reaches the handshake (uvloop hands it to the gate first)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable

import pytest
from aiohttp import web

from app.services.cluster.identity import peer_hostname
from app.services.cluster.tls import TlsContexts, client_context, pin_check_middleware
from app.services.cluster.trust import PeerPin
from app.services.listener_budget import BudgetedSite, cluster_budget
from tests.cluster.conftest import Node

uvloop = pytest.importorskip("uvloop")


def pin_of(node: Node) -> PeerPin:
    return PeerPin.create(node.identity.node_id, node.identity.name, node.identity.cert_pem, None)


def test_client_hello_read_with_the_accept_is_not_lost(make_node: Callable[[str], Node]) -> None:
    server_node, client_node = make_node("a"), make_node("b")
    server_node.trust.add(pin_of(client_node))
    answers: list[bytes] = []

    def call(port: int) -> None:
        context = client_context(client_node.identity, pin_of(server_node))
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
                with context.wrap_socket(raw, server_hostname=peer_hostname(server_node.identity.node_id)) as tls:
                    tls.sendall(b"GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                    answers.append(tls.recv(15))

    async def serve() -> None:
        contexts = TlsContexts(server_node.identity, server_node.trust)

        async def hello(_: web.Request) -> web.Response:
            return web.Response(text="hi")

        app = web.Application(middlewares=[pin_check_middleware(contexts)])
        app.router.add_get("/x", hello)
        runner = web.AppRunner(app)
        await runner.setup()
        site = BudgetedSite(runner, "127.0.0.1", 0, cluster_budget(1024), label="cluster port",
                            ssl_context=contexts.server)
        await site.start()
        assert site.bound is not None
        caller = threading.Thread(target=call, args=(site.bound[1],))
        caller.start()
        while caller.is_alive():
            # The loop blocks between its turns (as a busy node's does), so the accept and the
            # ClientHello are read in the same iteration.
            caller.join(timeout=0.05)
            await asyncio.sleep(0)
        await runner.cleanup()

    uvloop.run(serve())
    assert answers == [b"HTTP/1.1 200 OK"] * 3
