"""The front door: Ollama and OpenAI APIs on 127.0.0.1, loopback callers only."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from aiohttp import web

from app.services.frontdoor.http import read_json_body, shaped_error, write_result
from app.services.frontdoor.inventory_routes import add_inventory_routes
from app.services.frontdoor.misses import add_management_routes, shaped_misses
from app.services.keys.auth import Middleware, caller_for, model_refusal
from app.services.translate.shapes import Api, Operation

if TYPE_CHECKING:
    from app.services.frontdoor.context import DoorNode

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# OpenAI Responses and Anthropic Messages (frontdoor/dialects.py), imported at their first request.
DIALECT_PATHS = ("/v1/responses", "/v1/messages", "/v1/messages/count_tokens")


# Callers come from a handful of addresses with a handful of Host headers: each is judged once, not per request.
@lru_cache(maxsize=512)
def is_loopback(remote: str | None) -> bool:
    if not remote:
        return False
    try:
        return ipaddress.ip_address(remote.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def api_of_path(path: str) -> Api:
    return "openai" if path.startswith("/v1/") else "ollama"


LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


@lru_cache(maxsize=512)
def _host_of(value: str) -> str:
    """The host part of a Host header or an Origin URL, lower-cased, without port or brackets."""
    value = value.strip().lower()
    if "://" in value:
        value = urlsplit(value).netloc
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@lru_cache(maxsize=512)
def is_local_name(host: str) -> bool:
    return host in LOCAL_NAMES or host.endswith(".localhost") or is_loopback(host)


def refusal(request: web.Request) -> str | None:
    """Why a request may not use the front door, or None.

    Loopback callers only; and because a web page in a local browser is a loopback caller too,
    a request a browser made for another site (an Origin that is not this machine) is refused,
    as is a Host that is not a local name (DNS rebinding: evil.example resolving to 127.0.0.1)."""
    if not is_loopback(request.remote):
        return (f"refused: the front door answers callers on this machine only, and {request.remote} is not "
                "a loopback address; other machines reach this node through the paired cluster port")
    hosts, origins = request.headers.getall("Host", []), request.headers.getall("Origin", [])
    if len(hosts) > 1 or len(origins) > 1:
        # Which one would a proxy or a check believe? Neither: a request names one host and one origin.
        return "refused: the request repeats its Host or Origin header (a request has one of each)"
    host = hosts[0] if hosts else None
    if host is not None and not well_formed_host(host):
        return f"refused: Host {host[:100]!r} is not a host name with an optional port"
    if host is not None and not is_local_name(_host_of(host)):
        return f"refused: Host {host!r} is not this machine (a page on another site cannot use the front door)"
    origin = origins[0] if origins else None
    if origin is not None and not origin_allowed(origin):
        return f"refused: a page from {origin} may not use the front door (only apps on this machine may)"
    if origin is None and request.headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site":
        # A browser that sent no Origin (an older one, a form POST) still says the page was another site's.
        return ("refused: a page from another site may not use the front door (Sec-Fetch-Site: cross-site; "
                "only apps on this machine may)")
    return None


_HOST_HEADER = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::\d{1,5})?$")


@lru_cache(maxsize=512)
def well_formed_host(value: str) -> bool:
    """A Host header is one name or address and an optional port: no list, no spaces, no userinfo."""
    return bool(_HOST_HEADER.match(value.strip()))


# Desktop apps built on web views send these origins (the same list Ollama allows by default).
APP_SCHEMES = frozenset({"app", "file", "tauri", "vscode-webview", "vscode-file"})


@lru_cache(maxsize=512)
def origin_allowed(origin: str) -> bool:
    if "," in origin or any(c.isspace() for c in origin.strip()):
        return False  # a list of origins, or one with spaces in it, is no origin
    scheme = urlsplit(origin.strip().lower()).scheme
    if scheme in APP_SCHEMES:
        return True
    # "null" (sandboxed frames, data: pages) has no host and is refused like any other site.
    return scheme in ("http", "https") and is_local_name(_host_of(origin))


@web.middleware
async def loopback_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    reason = refusal(request)
    if reason is not None:
        return shaped_error(api_of_path(request.path), 403, reason)
    return await handler(request)


def add_lazy_dialect_routes(app: web.Application, node: DoorNode) -> None:
    handlers: dict[str, Handler] = {}

    def route(path: str) -> Handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            if not handlers:
                from app.services.frontdoor.dialects import dialect_handlers

                handlers.update(dialect_handlers(node))
            return await handlers[path](request)

        return handle

    for path in DIALECT_PATHS:
        app.router.add_post(path, route(path))


def build_frontdoor(node: DoorNode, *, lan_door: Middleware | None = None) -> web.Application:
    """The loopback front door (keys optional, control API included), or with ``lan_door`` the
    LAN door: the same two APIs behind that key-checking middleware, without the control API."""
    doors: list[Middleware] = [lan_door] if lan_door else [loopback_only, *node.door_checks]
    doors.append(shaped_misses)  # innermost: it sees the router's misses
    app = web.Application(middlewares=doors, client_max_size=node.settings.max_body_bytes)

    async def add_node_header(request: web.Request, response: web.StreamResponse) -> None:
        response.headers.setdefault("X-Pairwise-Node", node.name)

    app.on_response_prepare.append(add_node_header)

    def inference(api: Api, operation: Operation) -> Handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            body = await read_json_body(request, api, node.settings.max_body_bytes)
            if isinstance(body, web.Response):
                return body
            refused = model_refusal(request, api, body)
            if refused is not None:
                return refused
            result = await node.inference.run(api, operation, body, caller_for(node, request))
            return await write_result(request, result)

        return handle

    app.router.add_post("/api/chat", inference("ollama", "chat"))
    app.router.add_post("/api/generate", inference("ollama", "complete"))
    app.router.add_post("/api/embed", inference("ollama", "embed"))
    app.router.add_post("/api/embeddings", inference("ollama", "embed_legacy"))
    app.router.add_post("/v1/chat/completions", inference("openai", "chat"))
    app.router.add_post("/v1/completions", inference("openai", "complete"))
    app.router.add_post("/v1/embeddings", inference("openai", "embed"))
    add_lazy_dialect_routes(app, node)
    add_management_routes(app, node)
    add_inventory_routes(app, node)
    if lan_door:
        return app
    for method, path, handler in node.extra_door_routes:  # loopback only: batches hold the user's prompts
        app.router.add_route(method, path, handler)

    from app.services.frontdoor.control import add_control_routes

    add_control_routes(app, node)
    return app
