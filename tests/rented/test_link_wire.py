"""How a request to a far endpoint leaves the sponsor, on real TLS connections to a raw server on
127.0.0.1 (bench/README.md, "The rented link at 40 ms RTT"): the request's head and body go in one
write (one TLS record: the server's first read of the decrypted stream holds all of it, where a head
and a body written apart would arrive as two records, each read on its own), and the socket has
TCP_NODELAY, so a write is never held back for an ACK (Nagle) that a far end would send a round trip
later. Both clients that send to an endpoint are checked: the rented node's (aiohttp,
``rented/link.py::stream_client``) and the splice's (local engines, over HTTP and HTTPS); on both
event loops a node may run (asyncio's, uvloop)."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.services.backends.base import Opened
from app.services.backends.splice_client import SpliceClient
from app.services.backends.stream_client import StreamClient
from app.services.outbound import outbound_ssl_context
from app.services.rented.link import stream_client
from app.simulator.ca import generate_tls, server_ssl_context

BODY = {"model": "far-model", "messages": [{"role": "user", "content": "x" * 600}], "stream": True}
EVENTS = (b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
          b"data: [DONE]\n\n")


@dataclass
class FirstRead:
    """What the server's first read of each connection held, and the client's address."""

    reads: list[bytes] = field(default_factory=list)
    peers: list[tuple[str, int]] = field(default_factory=list)


class RawTlsServer:
    """One thread; each connection: one read (a TLS record's plaintext, or a TCP read without TLS),
    kept as it came, then the rest of the request read and a two-chunk stream answered."""

    def __init__(self, tls_dir: Path | None) -> None:
        tls = generate_tls(tls_dir) if tls_dir is not None else None
        self.context = server_ssl_context(tls) if tls is not None else None
        self.ca_file = str(tls.ca_file) if tls is not None else None
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.seen = FirstRead()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"{'https' if self.context else 'http'}://127.0.0.1:{self.port}/v1/chat/completions"

    def _serve(self) -> None:
        while True:
            try:
                raw, peer = self.sock.accept()
            except OSError:
                return
            with raw:
                conn = self.context.wrap_socket(raw, server_side=True) if self.context else raw
                try:
                    self._one(conn, peer)
                except (OSError, ssl.SSLError):
                    continue

    def _one(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        first = conn.recv(65536)
        self.seen.reads.append(first)
        self.seen.peers.append(peer)
        data = first
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        while len(body) < length:
            body += conn.recv(65536)
        chunked = b"".join(b"%x\r\n%b\r\n" % (len(event), event) for event in EVENTS) + b"0\r\n\r\n"
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                     b"connection: close\r\n\r\n" + chunked)

    def close(self) -> None:
        self.sock.close()


def whole_request_in(first: bytes) -> bool:
    head, sep, body = first.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    return len(body) == length and body.startswith(b"{")


def nodelay_of_socket_to(peer: tuple[str, int]) -> int:
    """TCP_NODELAY on this process's own socket whose local address is ``peer`` (the server saw it)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            probe = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        with probe:
            try:
                if probe.family == socket.AF_INET and probe.type == socket.SOCK_STREAM and probe.getsockname() == peer:
                    return probe.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            except OSError:
                continue
    raise AssertionError(f"no socket of this process is bound to {peer}")


def on_loop(loop: str, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        uvloop.run(main())
    else:
        asyncio.run(main())


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Callable[[bool], RawTlsServer]]:
    made: list[RawTlsServer] = []

    def make(tls: bool) -> RawTlsServer:
        server = RawTlsServer(tmp_path / f"tls-{len(made)}" if tls else None)
        made.append(server)
        return server

    yield make
    for server in made:
        server.close()


async def drain(opened: Opened) -> bytes:
    got = opened.first_chunk + b"".join([piece async for piece in opened.rest])
    await opened.closer()
    return got


async def ask_and_check(client: StreamClient | SpliceClient, server: RawTlsServer) -> None:
    try:
        opened = await client.open(server.url, json_body=BODY, headers={"authorization": "Bearer t"},
                                   first_byte_timeout_s=30, label="far")
        # While the stream is open its socket is still this process's: read its option now.
        nodelay = nodelay_of_socket_to(server.seen.peers[0])
        assert b"[DONE]" in await drain(opened)
    finally:
        await client.aclose()
    assert nodelay == 1
    assert whole_request_in(server.seen.reads[0]), server.seen.reads[0][:200]


PROC = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="finds its own socket through /proc")
LOOPS = pytest.mark.parametrize("loop", ["asyncio", "uvloop"])


@PROC
@LOOPS
def test_a_rented_request_leaves_in_one_write_on_a_nodelay_socket(servers: Callable[[bool], RawTlsServer],
                                                                   loop: str) -> None:
    server = servers(True)
    assert server.ca_file is not None
    ca_file = server.ca_file
    on_loop(loop, lambda: ask_and_check(stream_client((ca_file,)), server))


@PROC
@LOOPS
@pytest.mark.parametrize("tls", [True, False], ids=["https", "http"])
def test_a_spliced_request_leaves_in_one_write_on_a_nodelay_socket(servers: Callable[[bool], RawTlsServer],
                                                                    loop: str, tls: bool) -> None:
    server = servers(tls)
    extra_ca = (server.ca_file,) if server.ca_file else ()
    on_loop(loop, lambda: ask_and_check(SpliceClient(outbound_ssl_context(extra_ca)), server))
