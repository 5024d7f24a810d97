"""The splice's per-read path end to end over real sockets on 127.0.0.1: an engine that frames its
answer by hand, the splice's client, ``spliced.splice`` and the front door's ``_TransportOut`` writing
onto a real caller connection. The pushed reads (one whole chunk at a time, and many chunks at once)
give the caller the same bytes, usage and end as the writer's pull path (``StreamSession.chunks``); a
caller that stops reading holds the engine back and then gets all of it; an engine that garbles its
framing once pushing is a cut; a caller gone ends the splice undelivered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from aiohttp import web

from app.services.backends.base import Opened
from app.services.backends.splice_client import SpliceClient
from app.services.frontdoor.http import BACKED_UP_BYTES, _TransportOut
from app.services.inference import StreamSession
from app.services.outbound import outbound_ssl_context
from app.services.spliced import splice
from app.services.translate.responses import PassThrough, StreamTranslator
from tests.node.test_splice_client import until

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
ENGINE_MODEL, ASKED = "engine-model", "asked-model"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


def events(count: int, filler: int = 0) -> list[bytes]:
    base = {"id": "c1", "object": "chat.completion.chunk", "model": ENGINE_MODEL}
    out = [b"data: " + json.dumps({**base, "choices": [{"index": 0, "delta": {"content": f"t{i} " + "x" * filler}}],
                                   "usage": None}).encode() + b"\n\n" for i in range(count)]
    out.append(b"data: " + json.dumps({**base, "choices": [], "usage": {"prompt_tokens": 3,
                                                                        "completion_tokens": count}}).encode() + b"\n\n")
    return [*out, b"data: [DONE]\n\n"]


Answer = Callable[[asyncio.StreamWriter], Awaitable[None]]


@dataclass
class Engine:
    url: str
    writers: list[asyncio.StreamWriter]


@pytest.fixture
async def engine() -> AsyncIterator[Callable[[Answer], Awaitable[Engine]]]:
    servers: list[asyncio.Server] = []

    async def start(answer: Answer) -> Engine:
        state = Engine("", [])

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            state.writers.append(writer)
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length"))
                    await reader.readexactly(length)
                    await answer(writer)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        servers.append(server)
        state.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        return state

    yield start
    for server in servers:
        server.close()


def paced(evs: list[bytes]) -> Answer:
    """One chunk per write, each waited out: one chunk per read at the splice, as a paced engine gives."""
    async def answer(writer: asyncio.StreamWriter) -> None:
        for ev in evs:
            writer.write(chunk(ev))
            await writer.drain()
            await asyncio.sleep(0)
        writer.write(b"0\r\n\r\n")
    return answer


def all_at_once(evs: list[bytes]) -> Answer:
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + b"".join(chunk(ev) for ev in evs) + b"0\r\n\r\n")
        await writer.drain()
    return answer


def with_head(answer: Answer) -> Answer:
    async def headed(writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD)
        await answer(writer)
    return headed


async def no_finish(state: str, error: str | None, translator: StreamTranslator) -> None:
    return None


async def session_for(client: SpliceClient, url: str) -> tuple[StreamSession, Opened]:
    opened = await client.open(url, json_body={}, headers={}, first_byte_timeout_s=10, label="engine raw")
    translator = PassThrough("openai", ASKED, ENGINE_MODEL, keep_usage_chunk=False)
    return StreamSession(opened, None, translator, no_finish, "openai"), opened  # type: ignore[arg-type]


@dataclass
class Caller:
    """A real caller connection: the node's side (its transport, what ``_TransportOut`` writes on) and
    the caller's reader, read only when the test says so."""

    transport: asyncio.WriteTransport
    reader: asyncio.StreamReader
    server: asyncio.Server
    writers: tuple[asyncio.StreamWriter, asyncio.StreamWriter]  # held: one collected closes its transport

    def out(self) -> _TransportOut:
        response = web.StreamResponse()
        response.headers["Transfer-Encoding"] = "chunked"
        return _TransportOut(self.transport, response, None)

    async def read_to_close(self) -> bytes:
        self.transport.close()  # the splice is over: what the node wrote is all there is
        data = await self.reader.read()
        self.server.close()
        return data


async def caller() -> Caller:
    accepted: asyncio.Future[asyncio.StreamWriter] = asyncio.get_running_loop().create_future()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set_result(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    reader, caller_writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1], limit=4096)
    node_side = await accepted
    return Caller(node_side.transport, reader, server, (node_side, caller_writer))  # type: ignore[arg-type]


def dechunk(body: bytes) -> bytes:
    out, pos = bytearray(), 0
    while pos < len(body):
        nl = body.index(b"\r\n", pos)
        size = int(body[pos:nl], 16)
        out += body[nl + 2:nl + 2 + size]
        assert body[nl + 2 + size:nl + 4 + size] == b"\r\n"
        pos = nl + 4 + size
    return bytes(out)


async def pulled(client: SpliceClient, url: str) -> tuple[bytes, StreamSession]:
    """The writer's other path, the reference: the session's chunks, pulled."""
    session, opened = await session_for(client, url)
    data = b"".join([c async for c in session.chunks()])
    await opened.aclose()
    return data, session


async def pushed(client: SpliceClient, url: str) -> tuple[bytes, StreamSession]:
    session, opened = await session_for(client, url)
    assert opened.splice is not None
    to = await caller()
    delivered = await splice(session, opened.splice, to.out())
    assert delivered, (session.state, session.error, to.transport.is_closing())
    await opened.aclose()
    return dechunk(await to.read_to_close()), session


async def splicing_to_a_caller(client: SpliceClient, url: str) -> tuple[StreamSession, Opened, Caller,
                                                                       asyncio.Future[bool]]:
    session, opened = await session_for(client, url)
    assert opened.splice is not None
    to = await caller()
    return session, opened, to, asyncio.ensure_future(splice(session, opened.splice, to.out()))


@pytest.mark.parametrize("shape", ["one chunk per read", "many chunks per read"])
async def test_pushed_reads_give_the_caller_what_the_pull_path_gives(engine, shape: str) -> None:
    evs = events(300)
    server = await engine(with_head(paced(evs)) if shape == "one chunk per read" else all_at_once(evs))
    client = SpliceClient(outbound_ssl_context())
    try:
        reference, pulled_session = await pulled(client, server.url)
        data, session = await pushed(client, server.url)
    finally:
        await client.aclose()
    assert data == reference
    assert data.endswith(b"data: [DONE]\n\n") and data.count(b"\n\n") == 301  # the usage chunk hidden
    assert f'"model": "{ASKED}"'.encode() in data and ENGINE_MODEL.encode() not in data
    assert session.translator.usage == pulled_session.translator.usage
    assert (session.translator.usage.prompt_tokens, session.translator.usage.completion_tokens) == (3, 300)
    assert session.translator.finished_cleanly and session.state == "completed"


async def test_a_caller_that_stops_reading_holds_the_engine_back_then_gets_all_of_it(engine) -> None:
    evs = events(3000, filler=2000)  # 6 MB: more than the loopback's buffers and both high-water marks hold
    server = await engine(with_head(paced(evs)))
    client = SpliceClient(outbound_ssl_context())
    try:
        reference, _ = await pulled(client, server.url)
        session, opened, to, splicing = await splicing_to_a_caller(client, server.url)
        upstream = opened.splice.conn.transport  # the node's end of the engine's connection
        await until(lambda: to.transport.get_write_buffer_size() > BACKED_UP_BYTES and not upstream.is_reading(),
                    "a caller that does not read to hold the engine back")
        assert not splicing.done() and not session.translator.finished_cleanly
        received = asyncio.ensure_future(to.reader.read(-1))  # the caller reads again
        assert await splicing
        await opened.aclose()
        to.transport.close()
        data = dechunk(await received)
        to.server.close()
    finally:
        await client.aclose()
    assert data == reference
    assert session.translator.finished_cleanly and session.translator.usage.completion_tokens == 3000


async def test_a_garbled_chunk_once_pushing_is_a_cut(engine) -> None:
    evs = events(3)
    first_delivered = asyncio.Event()

    async def garbled(writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + chunk(evs[0]))
        await writer.drain()
        await first_delivered.wait()  # the garbled bytes come in a read of their own, once pushing
        writer.write(b"zz\r\n")
        await writer.drain()

    server = await engine(garbled)
    client = SpliceClient(outbound_ssl_context())
    try:
        session, opened, to, splicing = await splicing_to_a_caller(client, server.url)
        head = await to.reader.readuntil(b"\n\n")  # the first event reached the caller
        first_delivered.set()
        assert await splicing  # the caller got the whole error line
        await opened.aclose()
        data = dechunk(head + await to.read_to_close())
    finally:
        await client.aclose()
    assert session.state == "failed" and session.error is not None and "malformed response" in session.error
    lines = [line for line in data.split(b"\n\n") if line]
    assert lines[0] == evs[0].strip().replace(ENGINE_MODEL.encode(), ASKED.encode())
    assert len(lines) == 2 and json.loads(lines[1][len(b"data: "):])["error"]


async def test_a_caller_gone_mid_stream_ends_the_splice_undelivered(engine) -> None:
    evs = events(2000)
    server = await engine(with_head(paced(evs)))
    client = SpliceClient(outbound_ssl_context())
    try:
        session, opened, to, splicing = await splicing_to_a_caller(client, server.url)
        await to.reader.readexactly(1000)  # it has begun
        to.transport.abort()  # what the front door's transport is once the caller has gone
        assert await splicing is False
        await opened.aclose()  # what the front door does next: the engine's connection is closed, not kept
        engine_side = server.writers[-1].transport
        await until(engine_side.is_closing, "the engine's connection to be closed")
        to.server.close()
    finally:
        await client.aclose()
    assert not session.translator.finished_cleanly
