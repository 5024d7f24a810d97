"""What a protocol-level splice would cost: the data plane's answer to "what would meet the per-chunk
target", measured in every run as the ``splice_floor`` path.

A relay on the node's loop (uvloop where installed) with no HTTP library on the way: each request
opens a connection to the upstream, its bytes go up as they arrive (``Connection: close`` asked), and
each read of the answer is written down in the same callback (``data_received`` → ``write``): no task
wakes per chunk, no stream reader, no chunk re-framing. Flow control both ways (a full transport
pauses reading on the other side). It does no routing, records nothing and rewrites nothing, so it is
a floor, not a design: the gap between it and the ``aiohttp_floor`` path is what aiohttp's client and
server layers cost per chunk, the gap between it and nginx what Python's callback costs.

``python -m bench.splice_floor --upstream http://127.0.0.1:PORT --port N``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from urllib.parse import urlsplit

from app.services import eventloop
from bench.aiohttp_floor import FloorRelay


class _Upstream(asyncio.Protocol):
    def __init__(self, caller: _Caller) -> None:
        self.caller = caller
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.caller.transport is not None:
            self.caller.transport.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.caller.transport is not None:
            self.caller.transport.close()

    def pause_writing(self) -> None:
        if self.caller.transport is not None:
            self.caller.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.caller.transport is not None:
            self.caller.transport.resume_reading()


class _Caller(asyncio.Protocol):
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.transport: asyncio.Transport | None = None
        self.upstream: _Upstream | None = None
        self.pending = bytearray()
        self.head_done = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        try:
            _, upstream = await asyncio.get_running_loop().create_connection(
                lambda: _Upstream(self), self.host, self.port)
        except OSError:
            if self.transport is not None:
                self.transport.close()
            return
        self.upstream = upstream
        self._flush()

    def data_received(self, data: bytes) -> None:
        self.pending += data
        self._flush()

    def _flush(self) -> None:
        up = self.upstream
        if up is None or up.transport is None or not self.pending:
            return
        if not self.head_done:
            head, sep, rest = bytes(self.pending).partition(b"\r\n\r\n")
            if not sep:
                return
            lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
            self.pending = bytearray(b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n" + rest)
            self.head_done = True
        up.transport.write(bytes(self.pending))
        self.pending.clear()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.upstream is not None and self.upstream.transport is not None:
            self.upstream.transport.close()

    def pause_writing(self) -> None:
        if self.upstream is not None and self.upstream.transport is not None:
            self.upstream.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.upstream is not None and self.upstream.transport is not None:
            self.upstream.transport.resume_reading()


async def serve(upstream: str, port: int) -> None:
    parts = urlsplit(upstream)
    host, up_port = parts.hostname or "127.0.0.1", parts.port or 80
    server = await asyncio.get_running_loop().create_server(lambda: _Caller(host, up_port), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.splice_floor", description=__doc__)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    eventloop.run(serve(args.upstream, args.port))
    return 0


class SpliceRelay(FloorRelay):
    """The splice floor as a subprocess of the bench."""

    module = "bench.splice_floor"

    def __init__(self, upstream_url: str, log: Path) -> None:
        super().__init__(upstream_url, log)


if __name__ == "__main__":
    sys.exit(main())
