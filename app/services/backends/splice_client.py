"""The pass-through splice's upstream side: one HTTP/1.1 exchange per request on a protocol of our own.

For a stream whose caller and engine speak the same API, aiohttp's client costs a task wake, a
StreamReader and a timer re-arm per chunk (bench/README.md, *The floors*). Here the engine's
connection is an ``asyncio.Protocol``: ``data_received`` de-frames the body (``h1_response``) and
hands each piece on in the same callback. Until the stream is handed to a writer it buffers (the
first chunk, an error body, a whole answer read in full); ``Exchange.push_to`` then switches it to
calling the writer's sink directly, with no task in between.

Same contract as ``stream_client.StreamClient.open`` (same errors, same words): statuses that mean
"try someone else" become an UpstreamError before anything reaches the caller, the first chunk is
read under the first-byte budget, then the idle timeout holds between chunks (checked by a timer
that is re-armed only when it fires, so a chunk costs one clock read). Trust is the same
``ssl.SSLContext`` (``outbound.outbound_ssl_context``: verification on, extra CAs), with the URL's
host as the name checked. A connection whose answer was read to its end and that may be kept goes
back to a per-upstream pool; any other is closed. An idle connection is closed after ``keep_idle_s``
(a timer per pool, as aiohttp's connector does), and one the far end has closed, or has sent anything
on, is never handed out (a poll of its socket before each reuse: the close may not have been read yet).

``resend_unanswered``: a kept connection that ends with no byte of answer is asked once more on a new
one. Right for an engine (nothing is billed); a rented endpoint's client turns it off, since the
request may have reached the endpoint before the connection ended, and resending it could bill it
twice (aiohttp does not resend a POST either).
"""

from __future__ import annotations

import asyncio
import json
import select
import ssl
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from urllib.parse import urlsplit

from app.services.backends.base import DEFAULT_IDLE_TIMEOUT_S, Opened, SpliceSink
from app.services.backends.h1_response import MalformedResponse, ResponseReader
from app.services.backends.http_open import FAILOVER_STATUSES, error_text, keep_alive_only
from app.services.errors import UpstreamCut, UpstreamError, UpstreamTimeout

CONNECT_TIMEOUT_S = 10.0
# Kept connections per engine (a burst of streams leaves as many idle; reconnecting them would cost
# more than keeping them), and how long one is kept unused (as aiohttp's connector keeps its own).
MAX_IDLE_PER_UPSTREAM = 512
KEEP_IDLE_S = 15.0
# Buffered (not yet pushed) body bytes above which the engine's connection stops being read.
PULL_HIGH_WATER = 256 * 1024


class Exchange:
    """One request's answer on one connection: buffered (pull) until ``push_to``, then pushed."""

    def __init__(self, conn: _Conn, label: str) -> None:
        self.conn, self.label = conn, label
        self.reader = ResponseReader()
        self.head_ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending: deque[bytes] = deque()
        self._pending_bytes = 0
        self._waiter: asyncio.Future[None] | None = None
        self._sink: SpliceSink | None = None
        self.error: UpstreamError | None = None
        self.ended = False
        self.got_bytes = False
        self._idle_s = 0.0
        self._last_rx = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._paused_by_us = False
        # Bound once: on_data runs once per read of a stream, and a bound method made per call
        # costs as much as a small call (bench/README.md, *fewer Python calls per read*).
        self._feed = self.reader.feed
        self._clock = conn.loop.time
        self._piece: Callable[[bytes], None] | None = None  # the sink's, once pushing

    # --- called by the connection -------------------------------------------------------------
    def on_data(self, data: bytes) -> None:
        push = self._piece
        if push is not None:
            # Pushing: the head is in and bytes have come (push_to follows open), so each read only
            # notes the time, is de-framed and goes on as one piece.
            if self._idle_s:
                self._last_rx = self._clock()
            try:
                pieces = self._feed(data)
            except MalformedResponse as exc:
                self._malformed(exc)
                return
            if pieces:
                # One read of many chunks (an engine faster than this loop) goes on as one piece: one
                # pass of the translator and one write to the caller, not one of each per chunk.
                push(pieces[0] if len(pieces) == 1 else b"".join(pieces))
            if self.reader.done:
                self._end(None)
            return
        self.got_bytes = True
        if self._idle_s:
            self._last_rx = self._clock()
        try:
            pieces = self._feed(data)
        except MalformedResponse as exc:
            self._malformed(exc)
            return
        if self.reader.head is not None and not self.head_ready.done():
            self.head_ready.set_result(None)
        sink = self._sink
        if pieces:
            piece = pieces[0] if len(pieces) == 1 else b"".join(pieces)
            if sink is not None:
                sink.piece(piece)
            elif piece:
                self._pending.append(piece)
                self._pending_bytes += len(piece)
        if self.reader.done:
            self._end(None)
        elif sink is None:
            if self._pending_bytes > PULL_HIGH_WATER:
                self.pause_reading()
            self._wake()

    def _malformed(self, exc: MalformedResponse) -> None:
        self._end(UpstreamCut(f"the upstream {self.label} cut the stream (malformed response: {exc})"))
        self.conn.close()

    def on_lost(self, exc: Exception | None) -> None:
        if self.ended:
            return
        if self.reader.head is not None:
            self.reader.eof()
        if self.reader.done:
            self._end(None)
            return
        what = type(exc).__name__ if exc is not None else "ServerDisconnectedError"
        self._end(UpstreamCut(f"the upstream {self.label} cut the stream ({what})"))

    def _end(self, error: UpstreamError | None) -> None:
        if self.ended:
            return
        self.ended, self.error = True, error
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.head_ready.done():
            self.head_ready.set_result(None)
        if self._sink is not None:
            self._sink.ended(error)
        else:
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # --- the idle timeout between chunks ------------------------------------------------------
    def arm_idle(self, idle_s: float) -> None:
        if self.ended or idle_s <= 0:
            return
        self._idle_s, self._last_rx = idle_s, self.conn.loop.time()
        self._timer = self.conn.loop.call_later(idle_s, self._check_idle)

    def _check_idle(self) -> None:
        self._timer = None
        if self.ended:
            return
        now = self.conn.loop.time()
        if self._paused_by_us:  # the caller is slow, not the engine: the wait is not the engine's
            self._last_rx = now
        quiet = now - self._last_rx
        if quiet >= self._idle_s:
            self._end(UpstreamTimeout(f"the upstream {self.label} sent nothing for {self._idle_s:g} s mid-stream"))
            self.conn.close()
            return
        self._timer = self.conn.loop.call_later(self._idle_s - quiet, self._check_idle)

    # --- flow control -------------------------------------------------------------------------
    def pause_reading(self) -> None:
        if not self._paused_by_us:
            self._paused_by_us = True
            self.conn.pause_reading()

    def resume_reading(self) -> None:
        if self._paused_by_us:
            self._paused_by_us = False
            self.conn.resume_reading()

    # --- the two ways to consume ---------------------------------------------------------------
    async def next_piece(self) -> bytes:
        """The next body piece; b"" at the body's end; an UpstreamError if it was cut or stalled."""
        while not self._pending:
            if self.ended:
                if self.error is not None:
                    raise self.error
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        piece = self._pending.popleft()
        self._pending_bytes -= len(piece)
        if self._pending_bytes <= PULL_HIGH_WATER // 2:
            self.resume_reading()
        return piece

    def push_to(self, sink: SpliceSink) -> None:
        """From now on every piece goes to ``sink`` as it arrives; what is buffered goes first."""
        self._sink, self._piece = sink, sink.piece
        while self._pending:
            sink.piece(self._pending.popleft())
        self._pending_bytes = 0
        self.resume_reading()
        if self.ended:
            sink.ended(self.error)

    def release(self) -> None:
        """The caller is done with it: keep the connection for the next request when its answer was
        read whole and it may be kept, close it otherwise (which also stops the engine's work)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._sink = self._piece = None
        if self.ended and self.error is None and self.reader.reusable and not self._pending:
            self.resume_reading()  # a writer that paused it at the end must not hand the next one a paused connection
            self.conn.idle()
        else:
            self.ended = True
            self.conn.close()


class _Conn(asyncio.Protocol):
    def __init__(self, pool: _Pool) -> None:
        self.pool = pool
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.exchange: Exchange | None = None
        self.closed = False
        self.idle_since = 0.0
        self.fd = -1  # the socket's descriptor, polled before a reuse (-1: none to poll)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        self.fd = sock.fileno() if sock is not None else -1

    def data_received(self, data: bytes) -> None:
        if self.exchange is not None:
            self.exchange.on_data(data)
        else:  # bytes on an idle connection answer nothing we asked: it cannot be trusted for the next
            self.close()

    def eof_received(self) -> bool | None:
        return None  # close our end too; connection_lost ends the exchange

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool.forget(self)
        if self.exchange is not None:
            self.exchange.on_lost(exc)

    def pause_reading(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.closed = True
            self.transport.close()
        self.pool.forget(self)

    def idle(self) -> None:
        self.exchange = None
        self.idle_since = self.loop.time()
        self.pool.keep(self)

    def usable(self) -> bool:
        """Open, and nothing waiting on its socket: an idle connection that is readable was closed
        by the far end (a FIN or a reset the loop has not read yet) or holds bytes nobody asked for."""
        if self.closed or self.transport is None or self.transport.is_closing():
            return False
        return self.fd < 0 or not _readable(self.fd)


class _Pool:
    def __init__(self, keep_idle_s: float, max_idle: int) -> None:
        self.idle: deque[_Conn] = deque()  # oldest first: ``idle_since`` grows left to right
        self.keep_idle_s, self.max_idle = keep_idle_s, max_idle
        self._sweep: asyncio.TimerHandle | None = None

    def take(self) -> _Conn | None:
        self._expire()
        while self.idle:
            conn = self.idle.pop()  # the most recently used: the least likely to have been closed
            if conn.usable():
                return conn
            conn.close()  # nothing was sent on it
        return None

    def keep(self, conn: _Conn) -> None:
        if conn.closed:
            return
        self.idle.append(conn)
        while len(self.idle) > self.max_idle:
            self.idle.popleft().close()
        if self._sweep is None:
            self._sweep = conn.loop.call_later(self.keep_idle_s, self._swept)

    def _expire(self) -> None:
        while self.idle and self.idle[0].loop.time() - self.idle[0].idle_since >= self.keep_idle_s:
            self.idle.popleft().close()  # the oldest first: unused too long

    def _swept(self) -> None:
        """Close what has been idle for the keep-alive, and look again when the oldest left is due."""
        self._sweep = None
        self._expire()
        if self.idle:
            oldest = self.idle[0]
            due = oldest.idle_since + self.keep_idle_s - oldest.loop.time()
            self._sweep = oldest.loop.call_later(max(due, 0.0), self._swept)

    def set_keep_idle(self, seconds: float) -> None:
        """A new keep-alive: what is now past it closes at once, the rest when due."""
        self.keep_idle_s = seconds
        if self._sweep is not None:
            self._sweep.cancel()
        self._swept()

    def forget(self, conn: _Conn) -> None:
        try:
            self.idle.remove(conn)
        except ValueError:
            pass

    def close_all(self) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        while self.idle:
            self.idle.pop().close()


class SpliceClient:
    """One upstream's splice connections (made inside the running loop on first use)."""

    def __init__(self, ssl_context: ssl.SSLContext, *, connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 keep_idle_s: float = KEEP_IDLE_S, max_idle: int = MAX_IDLE_PER_UPSTREAM,
                 resend_unanswered: bool = True, server_hostname: str | None = None) -> None:
        self._ssl = ssl_context
        self._server_hostname = server_hostname  # the name checked when not the URL's host (a peer's UUID name)
        self._connect_timeout_s = connect_timeout_s
        self._keep_idle_s, self._max_idle = keep_idle_s, max_idle
        self._resend_unanswered = resend_unanswered
        self._pools: dict[tuple[str, str, int], _Pool] = {}

    def _protocol(self, pool: _Pool) -> _Conn:
        """A new connection's protocol (a subclass may watch its connections: cluster/warm_splice.py)."""
        return _Conn(pool)

    def _pool(self, scheme: str, host: str, port: int) -> _Pool:
        pool = self._pools.get((scheme, host, port))
        if pool is None:
            pool = self._pools[(scheme, host, port)] = _Pool(self._keep_idle_s, self._max_idle)
        return pool

    async def _connect(self, scheme: str, host: str, port: int, pool: _Pool, label: str) -> _Conn:
        loop = asyncio.get_running_loop()
        secure = scheme == "https"
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                _, conn = await loop.create_connection(
                    lambda: self._protocol(pool), host, port,
                    ssl=self._ssl if secure else None,
                    server_hostname=(self._server_hostname or host) if secure else None)
        except TimeoutError as exc:  # the connect's own limit, not the first-byte budget
            raise UpstreamError(f"{label} could not be reached: no connection within {self._connect_timeout_s:g} s") from exc
        return conn

    async def open(self, url: str, *, json_body: Mapping[str, object], headers: dict[str, str],
                   first_byte_timeout_s: float, idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S, label: str,
                   retry_statuses: frozenset[int] = FAILOVER_STATUSES) -> Opened:
        """POST ``json_body`` and return once the first chunk has arrived (``Opened.splice`` set)."""
        parts = urlsplit(url)
        scheme, host = parts.scheme, parts.hostname or "127.0.0.1"
        port = parts.port or (443 if scheme == "https" else 80)
        pool = self._pool(scheme, host, port)
        body = json.dumps(json_body, separators=(",", ":")).encode()
        request = _request_bytes(parts.path or "/", parts.query, parts.netloc, headers, body)
        asked: list[Exchange] = []  # the exchange under way, for closing it on any failure
        try:
            async with asyncio.timeout(first_byte_timeout_s):
                exchange = await self._ask(pool, scheme, host, port, request, label, asked)
                head = exchange.reader.head
                if head is None:
                    raise exchange.error or UpstreamCut(f"the upstream {label} cut the stream")
                if head.status in retry_statuses:
                    raw = b"".join([p async for p in _pieces(exchange)])
                    exchange.release()  # read whole: kept for the next try (a 503 while warming)
                    asked.clear()
                    raise UpstreamError(f"{label} answered {head.status}: {error_text(raw)}", status=head.status)
                first = await exchange.next_piece()
                content_type = head.headers.get("content-type", "")
                while first and keep_alive_only(first, content_type):  # still under the first-byte budget
                    more = await exchange.next_piece()
                    if not more:
                        break
                    first += more
        except TimeoutError as exc:  # first: a TimeoutError is an OSError
            _drop(asked)
            raise UpstreamTimeout(f"{label} sent nothing within {first_byte_timeout_s:g} s") from exc
        except (OSError, ssl.SSLError) as exc:
            _drop(asked)
            raise UpstreamError(f"{label} could not be reached: {type(exc).__name__}: {exc}") from exc
        except UpstreamCut as exc:
            _drop(asked)
            raise UpstreamError(f"{label} could not be reached: {exc.message}") from exc
        except BaseException:
            _drop(asked)
            raise
        exchange.arm_idle(idle_timeout_s)
        opened = exchange

        async def release() -> None:
            opened.release()

        return Opened(
            status=head.status,
            content_type=head.headers.get("content-type", "application/json"),
            first_chunk=first,
            rest=_pieces(opened),
            closer=release,
            headers=dict(head.headers),
            splice=opened,
        )

    async def _ask(self, pool: _Pool, scheme: str, host: str, port: int, request: bytes, label: str,
                   asked: list[Exchange]) -> Exchange:
        """Send the request and wait for the answer's head (or the connection's end)."""
        for attempt in (0, 1):
            conn = pool.take() if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = await self._connect(scheme, host, port, pool, label)
            exchange = Exchange(conn, label)
            asked[:] = [exchange]
            conn.exchange = exchange
            assert conn.transport is not None
            conn.transport.write(request)
            await exchange.head_ready
            # A kept connection the engine closed while it was idle answers nothing: for an engine
            # asking once more on a new connection is safe (see ``resend_unanswered``).
            if not (self._resend_unanswered and reused and exchange.ended and not exchange.got_bytes):
                return exchange
        return exchange

    async def aclose(self) -> None:
        for pool in self._pools.values():
            pool.close_all()
        self._pools.clear()


def _readable(fd: int) -> bool:
    """Whether the socket has anything to read now (bytes, a FIN, a reset), without waiting."""
    if sys.platform != "win32":  # poll: any descriptor number (select() stops at FD_SETSIZE)
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        return bool(poll.poll(0))
    return bool(select.select([fd], [], [], 0)[0])  # Windows: sockets only, which this is


def _drop(asked: list[Exchange]) -> None:
    for exchange in asked:
        exchange.ended = True
        exchange.conn.close()


async def _pieces(exchange: Exchange) -> AsyncIterator[bytes]:
    while True:
        piece = await exchange.next_piece()
        if not piece:
            return
        yield piece


def _request_bytes(path: str, query: str, netloc: str, headers: dict[str, str], body: bytes) -> bytes:
    target = f"{path}?{query}" if query else path
    lines = [f"POST {target} HTTP/1.1", f"Host: {netloc.rpartition('@')[2]}",
             "Content-Type: application/json", f"Content-Length: {len(body)}",
             "Accept-Encoding: identity",  # the bytes are read for usage and passed on as they are
             "User-Agent: pairwise"]
    for name, value in headers.items():
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
            raise UpstreamError("a header for the upstream holds a line break")
        if name.lower() not in ("host", "content-type", "content-length", "accept-encoding"):
            lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

