"""Slow bodies are budgeted like idle connections (issue 26, item 4).

The node runs with its open-file limit lowered to 1,024 (soft and hard), so its front door holds at
most 341 connections. 400 local connections each send a request's headers and then one body byte
every two seconds: no gap is long enough to count as a stall. A local chat through the real
`openai` client still answers (the slowest body is closed for it), and the trickling connections
are closed by the node for arriving under the minimum rate."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest

from app.harness import NodeProc, wait_until
from tests.harden.test_connection_flood import CHAT_BOUND_S, chat, small_node, status

TRICKLERS = 400
HEAD = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000\r\n\r\n{")

__all__ = ["small_node"]  # the fixture, shared with the idle-connection flood


@contextlib.contextmanager
def trickling(address: str, count: int) -> Iterator[list[socket.socket]]:
    host, port = address.rsplit(":", 1)
    sockets: list[socket.socket] = []
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(2.0):
            for sock in list(sockets):
                with contextlib.suppress(OSError):
                    sock.send(b" ")

    for _ in range(count):
        sock = socket.create_connection((host, int(port)), timeout=30)
        with contextlib.suppress(OSError):
            sock.sendall(HEAD)
        sock.setblocking(False)
        sockets.append(sock)
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        yield sockets
    finally:
        stop.set()
        thread.join(10)
        for sock in sockets:
            sock.close()


def closed_by_node(sock: socket.socket) -> bool:
    try:
        return sock.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


@pytest.mark.usefixtures("small_node")
def test_hundreds_of_trickling_bodies_leave_a_local_chat_answering(small_node: NodeProc) -> None:
    node = small_node
    with trickling(node.runtime["listen"], TRICKLERS) as sockets:
        wait_until(lambda: status(node)["connections"]["front door"]["seen"] >= TRICKLERS, timeout=120,
                   what="the node to have accepted every trickling connection")
        for _ in range(3):
            assert chat(node) < CHAT_BOUND_S
        # Under the minimum rate once their grace is over: closed by the node, not left to trickle on.
        wait_until(lambda: sum(closed_by_node(s) for s in sockets) >= TRICKLERS - 5, timeout=60, interval=0.5,
                   what="the node to close the trickling connections")
        door = status(node)["connections"]["front door"]
        assert door["slow_bodies_closed"] + door["evicted"] >= TRICKLERS - 5
        assert chat(node) < CHAT_BOUND_S
    assert "Too many open files" not in node.log.read_text()
