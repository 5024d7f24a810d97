"""Writing an InferenceResult to an aiohttp response, shared by the front door
and the cluster relay.

A stream's head (status line and headers) leaves with its first chunk, in one write, on both paths
(aiohttp's writer and the splice's): the caller's first read then holds its first bytes, where a
head sent on its own at ``prepare`` cost the node a second send and the caller a second wake before
its time to first byte (bench/README.md, "The rented link at 40 ms RTT").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter

from app.services.frontdoor.body import BodyError, parse_json_object, read_body
from app.services.inference import InferenceResult, StreamSession
from app.services.json_types import JsonObject
from app.services.spliced import splice, spliceable
from app.services.translate.shapes import Api, error_body

# The caller's write buffer above which the engine's connection is paused (the transport's own
# high-water mark is 64 KiB), and the check while waiting for it to drain.
BACKED_UP_BYTES = 64 * 1024
DRAIN_CHECK_S = 0.005


async def read_json_body(request: web.Request, api: Api, max_bytes: int) -> JsonObject | web.Response:
    """The request's JSON object, read to its end, or a shaped error response that says what is wrong."""
    try:
        return parse_json_object(await read_body(request, max_bytes))
    except BodyError as exc:
        return shaped_error(api, exc.status, exc.message)


def shaped_error(api: Api, status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(error_body(api, message, status=status), status=status, headers=headers)


async def write_result(request: web.Request, result: InferenceResult) -> web.StreamResponse:
    if result.stream is None:
        return web.Response(status=result.status, body=result.body, content_type=result.content_type,
                            headers=result.headers)
    session = result.stream
    response = _HeadWithFirstChunk(status=result.status, headers=result.headers)
    response.content_type = result.content_type
    if result.content_type == "text/event-stream":
        response.headers["Cache-Control"] = "no-cache"
    cancelled = True
    upstream = spliceable(session)
    try:
        writer = await response.prepare(request)
        if upstream is not None and isinstance(session, StreamSession) and request.transport is not None:
            cancelled = not await splice(session, upstream, _TransportOut(request.transport, response, writer))
        else:
            async for chunk in session.chunks():
                await response.write(chunk)
            # Everything was written: a caller that hangs up now (as soon as it read the last
            # chunk) did not cancel anything.
            cancelled = False
        await response.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        # Closing here, whatever happened, closes the upstream request too.
        await asyncio.shield(session.close(cancelled=cancelled))
    return response


class _HeadWithFirstChunk(web.StreamResponse):
    """A stream response whose head aiohttp holds until the first chunk and sends with it (as it
    does for a whole ``web.Response``); a stream that ends with nothing written sends it at
    ``write_eof``."""

    _send_headers_immediately = False


def _take_head(writer: AbstractStreamWriter | None) -> bytes:
    """The head aiohttp's writer holds for the first chunk, taken from it (it then counts as sent,
    as its own ``send_headers`` leaves it); empty when it holds none. A writer that keeps it some
    other way (another aiohttp) is told to send it now, on its own, so it still goes first."""
    held = getattr(writer, "_headers_buf", None)
    if isinstance(held, bytes) and held and getattr(writer, "_headers_written", None) is False:
        writer._headers_buf = None  # type: ignore[union-attr]
        writer._headers_written = True  # type: ignore[union-attr]
        return held
    send_headers = getattr(writer, "send_headers", None)
    if callable(send_headers):
        send_headers()
    return b""


class _TransportOut:
    """The splice's writes, straight onto the caller's transport: framed as the response's own
    writer would (chunked, unless the caller spoke HTTP/1.0), the first one with the head aiohttp
    held back; the last chunk is still aiohttp's ``write_eof``, so its keep-alive bookkeeping stays
    its own (and a splice that wrote nothing leaves the head to it)."""

    def __init__(self, transport: asyncio.BaseTransport, response: web.StreamResponse,
                 writer: AbstractStreamWriter | None) -> None:
        self._transport: asyncio.WriteTransport = transport  # type: ignore[assignment]
        self._chunked = response.headers.get("Transfer-Encoding", "").lower() == "chunked"
        self._writer: AbstractStreamWriter | None = writer
        # The transport's own methods, bound once: ``send`` and ``closing`` run once per read.
        self._write, self._buffered = self._transport.write, self._transport.get_write_buffer_size
        self.closing: Callable[[], bool] = self._transport.is_closing

    def send(self, data: bytes) -> bool:
        framed = b"%x\r\n%b\r\n" % (len(data), data) if self._chunked else data
        if self._writer is not None:
            head, self._writer = _take_head(self._writer), None
            framed = head + framed
        self._write(framed)
        return self._buffered() > BACKED_UP_BYTES

    def backed_up(self) -> bool:
        return self._buffered() > BACKED_UP_BYTES

    async def drained(self) -> None:
        # Only a caller slower than its engine gets here; aiohttp offers no public wait on its
        # transport's buffer, so this looks again every few milliseconds until it has room.
        while self.backed_up() and not self.closing():  # noqa: ASYNC110 - no event to wait on
            await asyncio.sleep(DRAIN_CHECK_S)
