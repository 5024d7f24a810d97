"""The control API under /_pairwise/v1/: how the CLI (and scripts) talk to a
running node. Guarded by the node's local control token (0600 file in its home),
on top of the front door's loopback-only rule."""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from app.services.errors import ConfigError, PairwiseError

if TYPE_CHECKING:
    from app.services.node import Node

PREFIX = "/_pairwise/v1"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def json_body(request: web.Request) -> dict[str, Any]:
    """A control call's JSON object body ({} when there is none); a clear ConfigError otherwise."""
    if not request.can_read_body:
        return {}
    try:
        data = await request.json()
    except ValueError as exc:
        raise ConfigError(f"malformed JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError("the body must be a JSON object")
    return data


def query_int(request: web.Request, name: str, default: int, *, low: int, high: int) -> int:
    """A whole-number query parameter; anything else is refused (400) naming it."""
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"query parameter {name!r} must be a whole number from {low} to {high}, "
                          f"not {raw[:40]!r}", title="Bad query parameter") from None
    if not low <= value <= high:
        raise ConfigError(f"query parameter {name!r} must be from {low} to {high}, not {value}",
                          title="Bad query parameter")
    return value


def query_flag(request: web.Request, name: str) -> bool:
    raw = request.query.get(name)
    if raw is None or raw.lower() in ("0", "false", "no", ""):
        return False
    if raw.lower() in ("1", "true", "yes"):
        return True
    raise ConfigError(f"query parameter {name!r} must be true or false, not {raw[:40]!r}",
                      title="Bad query parameter")


def error_response(exc: PairwiseError) -> web.Response:
    return web.json_response({"error": exc.message, "title": exc.title, "kind": type(exc).__name__},
                             status=exc.status)


def add_control_routes(app: web.Application, node: Node) -> None:
    token = node.home.control_token()

    def guarded(handler: Handler) -> Handler:
        async def wrapper(request: web.Request) -> web.StreamResponse:
            given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if not given or not hmac.compare_digest(given, token):
                return web.json_response(
                    {"error": "refused: the control API needs this node's control token (file control_token in its home)"},
                    status=401)
            try:
                return await handler(request)
            except PairwiseError as exc:
                return error_response(exc)

        return wrapper

    async def status(request: web.Request) -> web.Response:
        return web.json_response(node.status())

    async def nodes(request: web.Request) -> web.Response:
        return web.json_response({"nodes": node.nodes()})

    async def jobs(request: web.Request) -> web.Response:
        active = query_flag(request, "active")
        limit = query_int(request, "limit", 50, low=1, high=10_000)
        rows = node.jobs.list(active_only=active, limit=limit)
        return web.json_response({"jobs": [j.to_json() for j in rows]})

    async def events(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        queue = node.bus.subscribe()
        stopping = asyncio.ensure_future(node.stopping.wait())
        try:
            await response.write(json.dumps({"kind": "subscribed", "node": node.name}).encode() + b"\n")
            while not stopping.done():
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, stopping}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    line = getter.result().to_json()
                else:
                    getter.cancel()
                    line = {"kind": "node_stopping"} if stopping.done() else {"kind": "keepalive"}
                await response.write(json.dumps(line).encode() + b"\n")
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            stopping.cancel()
            node.bus.unsubscribe(queue)
        return response

    async def engines_list(request: web.Request) -> web.Response:
        return web.json_response({"engines": node.engines.describe()})

    async def engines_add(request: web.Request) -> web.Response:
        data = await json_body(request)
        credential = data.pop("token", None)
        described = await node.engines.add(data, credential)
        return web.json_response(described, status=201)

    async def engines_remove(request: web.Request) -> web.Response:
        await node.engines.remove(request.match_info["name"])
        return web.json_response({"removed": request.match_info["name"]})

    routes: list[tuple[str, str, Handler]] = [
        ("GET", "/status", status), ("GET", "/nodes", nodes), ("GET", "/jobs", jobs), ("GET", "/events", events),
        ("GET", "/engines", engines_list), ("POST", "/engines", engines_add),
        ("DELETE", "/engines/{name}", engines_remove),
    ]
    for method, path, handler in routes:
        app.router.add_route(method, PREFIX + path, guarded(handler))
    for method, path, handler in node.extra_control_routes:
        app.router.add_route(method, PREFIX + path, guarded(handler))
