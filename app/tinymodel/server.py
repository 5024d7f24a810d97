"""The tiny model server: app factory, fault middleware, test controls, and an in-process runner.

Faults (`fail_mode`) and `first_byte_delay_s` apply to every API route, /health included, so a
"down" engine looks down to health probes too; the /_tiny/ controls are never affected.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from app.tinymodel import ollama_api, openai_api, window
from app.tinymodel.options import TinyModelOptions
from app.tinymodel.wire import STATE_KEY, BadRequest, TinyState, abort_connection, read_json, state_of

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _family(path: str) -> str | None:
    if path.startswith("/v1/"):
        return "openai"
    if path.startswith("/api/"):
        return "ollama"
    return None


def _error(family: str | None, status: int, message: str, type_: str, code: str | None = None) -> web.Response:
    if family == "ollama":
        return ollama_api.ollama_error(status, message)
    return openai_api.openai_error(status, message, type_, code)


def _authorized(request: web.Request, token: str) -> bool:
    return request.headers.get("Authorization", "") == f"Bearer {token}"


@web.middleware
async def _tiny_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith("/_tiny/"):
        return await handler(request)
    state = state_of(request)
    opts = state.opts
    family = _family(request.path)
    if family is not None and opts.api not in (family, "both"):
        raise web.HTTPNotFound()
    state.requests += 1
    state.in_flight += 1
    try:
        if opts.require_token and family is not None and not _authorized(request, opts.require_token):
            return _error(family, 401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")
        if opts.fail_mode == "refuse":
            abort_connection(request)
            return web.Response()  # never written: the transport is gone
        if opts.first_byte_delay_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(state.closing.wait(), opts.first_byte_delay_s)
        if opts.fail_mode == "500":
            return _error(family, 500, "tiny model: injected internal error", "server_error")
        if opts.fail_mode == "not_an_object":  # valid JSON, but no object: an engine that broke its API
            return web.json_response(["tiny model: an answer that is no JSON object"])
        if opts.fail_mode == "hang":
            # aiohttp cancels this handler when the client disconnects (handler_cancellation=True).
            await state.closing.wait()
            abort_connection(request)
            return web.Response()
        return await handler(request)
    finally:
        state.in_flight -= 1


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _root(request: web.Request) -> web.Response:
    return web.Response(text="Ollama is running")


async def _config(request: web.Request) -> web.Response:
    state = state_of(request)
    if request.method == "POST":
        try:
            state.opts.update(await read_json(request))
        except (BadRequest, ValueError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
    return web.json_response(state.opts.as_dict())


async def _stats(request: web.Request) -> web.Response:
    state = state_of(request)
    return web.json_response({"requests": state.requests, "inferences": state.inferences, "in_flight": state.in_flight,
                              "last_headers": state.last_headers, "last_body": state.last_body})


def create_app(opts: TinyModelOptions) -> web.Application:
    app = web.Application(middlewares=[_tiny_middleware], client_max_size=16 * 1024 * 1024)
    app[STATE_KEY] = TinyState(opts=opts)
    app.router.add_get("/", _root)
    app.router.add_get("/health", _health)
    app.router.add_get("/_tiny/config", _config)
    app.router.add_post("/_tiny/config", _config)
    app.router.add_get("/_tiny/stats", _stats)
    app.router.add_get("/props", window.props)
    openai_api.add_routes(app)
    ollama_api.add_routes(app)
    return app


@dataclass
class RunningTiny:
    url: str
    port: int
    opts: TinyModelOptions
    runner: web.AppRunner
    state: TinyState

    async def close(self) -> None:
        self.state.closing.set()
        await self.runner.cleanup()


async def start_tiny(opts: TinyModelOptions, host: str = "127.0.0.1", port: int = 0) -> RunningTiny:
    app = create_app(opts)
    # handler_cancellation: a client that gives up ends its handler (no leaked "hang" tasks);
    # a short shutdown_timeout keeps test teardown fast when streams are still open.
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    return RunningTiny(url=f"http://{host}:{bound}", port=bound, opts=opts, runner=runner, state=app[STATE_KEY])
