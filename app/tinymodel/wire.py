"""Shared plumbing for the tiny model's routes: server state, JSON bodies, streaming with faults."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from aiohttp import web

from app.services.json_types import JsonObject
from app.tinymodel.options import TinyModelOptions


@dataclass
class TinyState:
    opts: TinyModelOptions
    requests: int = 0
    in_flight: int = 0
    inferences: int = 0
    last_headers: dict[str, str] = field(default_factory=dict)
    last_body: JsonObject = field(default_factory=dict)
    # Set when the server shuts down so "hang" handlers end instead of holding shutdown.
    closing: asyncio.Event = field(default_factory=asyncio.Event)

    def record_inference(self, request: web.Request, body: JsonObject) -> None:
        if "X-Pairwise-Probe" in request.headers:
            return  # the node's own look at what the engine does (an embeddings probe), not a caller's work
        self.inferences += 1  # unlike `requests`, model-list refreshes do not count
        self.last_headers = {k.lower(): v for k, v in request.headers.items()}
        self.last_body = body


STATE_KEY: web.AppKey[TinyState] = web.AppKey("tiny_state", TinyState)


def state_of(request: web.Request) -> TinyState:
    return request.app[STATE_KEY]


class BadRequest(Exception):
    """Raised for malformed or semantically invalid request bodies; routes map it to 400."""


async def read_json(request: web.Request) -> JsonObject:
    raw = await request.read()
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"invalid JSON body: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    return body


def resolve_model(name: object, models: list[str]) -> str | None:
    """Match a requested model name the way Ollama does: a missing tag means ':latest'."""
    if not isinstance(name, str) or not name:
        return None
    if name in models:
        return name
    if ":" not in name and f"{name}:latest" in models:
        return name
    if name.endswith(":latest") and name[: -len(":latest")] in models:
        return name
    return None


def abort_connection(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


class Emitter:
    """Streams a body chunk by chunk, applying token pacing and the "cut" and "stall" faults.

    `send` returns False once the stream must stop (cut injected or client gone);
    the handler then returns the response object, which aiohttp finishes quietly.
    """

    def __init__(self, request: web.Request, content_type: str) -> None:
        self.request = request
        self.state = state_of(request)
        self.response = web.StreamResponse(headers={"Content-Type": content_type})
        self.sent = 0
        self.alive = True

    async def start(self) -> web.StreamResponse:
        await self.response.prepare(self.request)
        return self.response

    async def send(self, data: bytes) -> bool:
        if not self.alive:
            return False
        opts = self.state.opts
        if opts.fail_mode == "cut" and self.sent >= opts.cut_after_chunks:
            abort_connection(self.request)
            self.alive = False
            return False
        if opts.fail_mode == "ping_then_hang" and "text/event-stream" in self.response.headers.get("Content-Type", ""):
            try:
                await self.response.write(b": ping - keep-alive\r\n\r\n")
            except ConnectionError:
                pass
            await self.state.closing.wait()  # reads the prompt for ever
            self.alive = False
            return False
        if opts.fail_mode == "stall" and self.sent >= opts.cut_after_chunks:
            await self.state.closing.wait()  # silent with the connection open, like a wedged engine
            self.alive = False
            return False
        if self.sent and opts.tokens_per_s > 0:
            await asyncio.sleep(1.0 / opts.tokens_per_s)
        try:
            if opts.fail_mode == "long_line" and self.sent == 1:
                await self._long_line(opts.long_line_bytes)
            await self.response.write(data)
        except ConnectionError:
            self.alive = False
            return False
        self.sent += 1
        return True

    async def _long_line(self, size: int) -> None:
        piece = b"x" * 65536
        for _ in range(size // len(piece)):
            await self.response.write(piece)
        await self.response.write(b"\n")

    async def finish(self) -> web.StreamResponse:
        if self.alive and self.state.opts.fail_mode == "no_terminator":
            abort_connection(self.request)
            self.alive = False
        if self.alive:
            try:
                await self.response.write_eof()
            except ConnectionError:
                self.alive = False
        return self.response


async def json_reply(request: web.Request, payload: object, status: int = 200) -> web.StreamResponse:
    """A JSON response; under the "cut" fault, half the body is sent before the connection drops."""
    body = json.dumps(payload).encode()
    if state_of(request).opts.fail_mode != "cut" or status != 200:
        return web.Response(body=body, status=status, content_type="application/json")
    response = web.StreamResponse(status=status, headers={"Content-Type": "application/json"})
    response.content_length = len(body)
    await response.prepare(request)
    try:
        await response.write(body[: len(body) // 2])
    except ConnectionError:
        pass
    abort_connection(request)
    return response
