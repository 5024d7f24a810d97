"""The splice's upstream client against raw servers on 127.0.0.1 that frame their answers by hand:
keep-alive reuse and its limits, a kept connection the engine closed, cuts mid-chunk, a malformed
answer, failover statuses, push mode with flow control, and TLS verified like every outbound call."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.services.backends.splice_client import SpliceClient
from app.services.errors import UpstreamCut, UpstreamError, UpstreamTimeout
from app.services.outbound import outbound_ssl_context

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


@dataclass
class RawServer:
    url: str
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    writers: list[asyncio.StreamWriter] = field(default_factory=list)


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    return head + await reader.readexactly(length)


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[Handler], Awaitable[RawServer]]]:
    servers: list[asyncio.Server] = []

    async def start(handler: Handler, ssl_context: ssl.SSLContext | None = None) -> RawServer:
        state = RawServer("")

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            state.connections += 1
            state.writers.append(writer)
            number = 0
            try:
                while True:
                    try:
                        state.requests.append(await read_request(reader))
                    except (asyncio.IncompleteReadError, ConnectionError):
                        return
                    number += 1
                    await handler(reader, writer, number)
                    if writer.is_closing():
                        return
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=ssl_context)
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        state.url = f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}/v1/chat/completions"
        return state

    yield start
    for server in servers:
        server.close()


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


async def answer_two_chunks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
    writer.write(SSE_HEAD + chunk(b"data: one\n\n"))
    await writer.drain()
    writer.write(chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
    await writer.drain()


async def read_all(client: SpliceClient, url: str, **kwargs: float) -> tuple[int, bytes]:
    opened = await client.open(url, json_body={"model": "m"}, headers={"authorization": "Bearer t"},
                               first_byte_timeout_s=kwargs.get("first", 10.0),
                               idle_timeout_s=kwargs.get("idle", 10.0), label="engine raw")
    try:
        return opened.status, opened.first_chunk + b"".join([c async for c in opened.rest])
    finally:
        await opened.aclose()


async def test_a_whole_answer_keeps_its_connection_for_the_next_request(raw_server) -> None:
    server = await raw_server(answer_two_chunks)
    client = SpliceClient(outbound_ssl_context())
    try:
        for _ in range(3):
            assert await read_all(client, server.url) == (200, b"data: one\n\ndata: [DONE]\n\n")
    finally:
        await client.aclose()
    assert server.connections == 1 and len(server.requests) == 3
    sent = server.requests[0]
    assert sent.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"authorization: Bearer t\r\n" in sent and sent.endswith(b'{"model":"m"}')


async def test_an_answer_that_closes_is_read_to_the_close_and_never_reused(raw_server) -> None:
    async def closing(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n"
                     b'{"done":false}\n')
        await writer.drain()
        writer.write(b'{"done":true}\n')
        writer.close()

    server = await raw_server(closing)
    client = SpliceClient(outbound_ssl_context())
    try:
        for _ in range(2):
            assert await read_all(client, server.url) == (200, b'{"done":false}\n{"done":true}\n')
    finally:
        await client.aclose()
    assert server.connections == 2


async def test_a_kept_connection_the_engine_closed_is_replaced_once(raw_server) -> None:
    server = await raw_server(answer_two_chunks)
    client = SpliceClient(outbound_ssl_context())
    try:
        await read_all(client, server.url)
        # The engine drops its idle connection; until the loop sees that, the pool still holds it.
        server.writers[0].transport.abort()
        assert await read_all(client, server.url) == (200, b"data: one\n\ndata: [DONE]\n\n")
    finally:
        await client.aclose()
    assert server.connections == 2


async def test_a_cut_mid_chunk_is_an_upstream_cut(raw_server) -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        writer.write(SSE_HEAD + chunk(b"data: one\n\n") + b"40\r\ndata: half")
        await writer.drain()
        writer.transport.abort()

    server = await raw_server(cut)
    client = SpliceClient(outbound_ssl_context())
    try:
        with pytest.raises(UpstreamCut, match="the upstream engine raw cut the stream"):
            await read_all(client, server.url)
    finally:
        await client.aclose()


async def test_a_malformed_answer_after_the_first_byte_is_a_cut_and_before_it_fails_over(raw_server) -> None:
    opened_event = asyncio.Event()

    async def garbled(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        writer.write(SSE_HEAD + chunk(b"data: one\n\n"))
        await writer.drain()
        await opened_event.wait()
        writer.write(b"zz\r\n")
        await writer.drain()

    async def not_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
        await writer.drain()

    client = SpliceClient(outbound_ssl_context())
    try:
        opened = await client.open((await raw_server(garbled)).url, json_body={}, headers={},
                                   first_byte_timeout_s=10, label="engine raw")
        assert opened.first_chunk == b"data: one\n\n"
        opened_event.set()
        with pytest.raises(UpstreamCut, match="malformed response"):
            [c async for c in opened.rest]
        await opened.aclose()
        with pytest.raises(UpstreamError, match="engine raw could not be reached") as caught:
            await read_all(client, (await raw_server(not_http)).url)
        assert not isinstance(caught.value, UpstreamCut)  # before the first byte: the next candidate is asked
    finally:
        await client.aclose()


async def test_failover_statuses_are_errors_before_the_first_byte(raw_server) -> None:
    async def busy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        body = b'{"error":{"message":"loading"}}'
        writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body))
        await writer.drain()

    client = SpliceClient(outbound_ssl_context())
    try:
        with pytest.raises(UpstreamError, match="engine raw answered 503: loading") as caught:
            await read_all(client, (await raw_server(busy)).url)
        assert caught.value.upstream_status == 503
    finally:
        await client.aclose()


async def test_no_head_within_the_budget_is_a_first_byte_timeout(raw_server) -> None:
    release = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        await release.wait()

    client = SpliceClient(outbound_ssl_context())
    try:
        with pytest.raises(UpstreamTimeout, match="engine raw sent nothing within 0.5 s"):
            await read_all(client, (await raw_server(silent)).url, first=0.5)
    finally:
        release.set()
        await client.aclose()


async def test_a_refused_connection_fails_over() -> None:
    client = SpliceClient(outbound_ssl_context())
    with pytest.raises(UpstreamError, match="engine raw could not be reached"):
        await read_all(client, "http://127.0.0.1:9/v1/chat/completions")


class Collect:
    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.done: asyncio.Future[UpstreamError | None] = asyncio.get_running_loop().create_future()

    def piece(self, data: bytes) -> None:
        self.pieces.append(data)

    def ended(self, error: UpstreamError | None) -> None:
        self.done.set_result(error)


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for a state of the loop's own objects (checked each few ms, 20 s at most)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def test_push_mode_delivers_in_order_and_pausing_holds_the_engine_back(raw_server) -> None:
    count, size = 8000, 4000  # 32 MB: more than the loopback's socket buffers hold

    async def many(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        writer.write(SSE_HEAD + chunk(b"data: 0\n\n"))
        await writer.drain()
        for i in range(1, count):
            writer.write(chunk(b"data: %d %b\n\n" % (i, b"x" * size)))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    server = await raw_server(many)
    client = SpliceClient(outbound_ssl_context())
    try:
        opened = await client.open(server.url, json_body={}, headers={}, first_byte_timeout_s=10,
                                   label="engine raw")
        assert opened.splice is not None
        sink = Collect()
        opened.splice.push_to(sink)
        opened.splice.pause_reading()  # a caller slower than its engine
        engine_side = server.writers[0].transport
        await until(lambda: engine_side.get_write_buffer_size() > 0, "the engine to be held back")
        assert not sink.done.done()
        opened.splice.resume_reading()
        assert await sink.done is None
        body = opened.first_chunk + b"".join(sink.pieces)
        assert [line.split(b" ")[1] for line in body.split(b"\n\n") if line] == [b"%d" % i for i in range(count)]
        await opened.aclose()
    finally:
        await client.aclose()


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tls")
    cert, key = root / "cert.pem", root / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


async def test_tls_is_verified_and_an_extra_ca_is_honoured(raw_server, self_signed: tuple[Path, Path]) -> None:
    cert, key = self_signed
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    server = await raw_server(answer_two_chunks, server_ctx)
    untrusting = SpliceClient(outbound_ssl_context())
    try:
        with pytest.raises(UpstreamError, match="could not be reached: SSLCertVerificationError"):
            await read_all(untrusting, server.url)
    finally:
        await untrusting.aclose()
    trusting = SpliceClient(outbound_ssl_context((str(cert),)))
    try:
        assert await read_all(trusting, server.url) == (200, b"data: one\n\ndata: [DONE]\n\n")
    finally:
        await trusting.aclose()


async def test_a_connection_paused_by_its_writer_at_the_end_is_kept_reading_for_the_next(raw_server) -> None:
    server = await raw_server(answer_two_chunks)
    client = SpliceClient(outbound_ssl_context())
    try:
        opened = await client.open(server.url, json_body={}, headers={}, first_byte_timeout_s=10, label="engine raw")
        assert opened.splice is not None
        sink = Collect()
        opened.splice.push_to(sink)
        assert await sink.done is None
        opened.splice.pause_reading()  # what the caller side does once it has the whole answer
        await opened.aclose()
        assert await read_all(client, server.url, first=5.0) == (200, b"data: one\n\ndata: [DONE]\n\n")
    finally:
        await client.aclose()
    assert server.connections == 1
