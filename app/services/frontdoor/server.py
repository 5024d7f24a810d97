"""The front door: Ollama and OpenAI APIs on 127.0.0.1, loopback callers only."""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web

from app.services.frontdoor.http import read_json_body, shaped_error, write_result
from app.services.frontdoor.inventory_routes import add_inventory_routes
from app.services.inference import Caller
from app.services.translate.shapes import Api, Operation

if TYPE_CHECKING:
    from app.services.node import Node

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(remote: str | None) -> bool:
    if not remote:
        return False
    try:
        return ipaddress.ip_address(remote.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def api_of_path(path: str) -> Api:
    return "openai" if path.startswith("/v1/") else "ollama"


@web.middleware
async def loopback_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not is_loopback(request.remote):
        message = (f"refused: the front door answers callers on this machine only, and {request.remote} is not "
                   "a loopback address; other machines reach this node through the paired cluster port")
        return shaped_error(api_of_path(request.path), 403, message)
    return await handler(request)


def build_frontdoor(node: Node) -> web.Application:
    app = web.Application(middlewares=[loopback_only], client_max_size=node.settings.max_body_bytes)

    async def add_node_header(request: web.Request, response: web.StreamResponse) -> None:
        response.headers.setdefault("X-Pairwise-Node", node.name)

    app.on_response_prepare.append(add_node_header)

    def inference(api: Api, operation: Operation) -> Handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            body = await read_json_body(request, api, node.settings.max_body_bytes)
            if isinstance(body, web.Response):
                return body
            caller = Caller(requester=request.headers.get("User-Agent", "unknown local app")[:200],
                            allow_off_lan=node.settings.off_lan == "allow")
            result = await node.inference.run(api, operation, body, caller)
            return await write_result(request, result)

        return handle

    app.router.add_post("/api/chat", inference("ollama", "chat"))
    app.router.add_post("/api/generate", inference("ollama", "complete"))
    app.router.add_post("/api/embed", inference("ollama", "embed"))
    app.router.add_post("/api/embeddings", inference("ollama", "embed_legacy"))
    app.router.add_post("/v1/chat/completions", inference("openai", "chat"))
    app.router.add_post("/v1/completions", inference("openai", "complete"))
    app.router.add_post("/v1/embeddings", inference("openai", "embed"))
    add_inventory_routes(app, node)

    from app.services.frontdoor.control import add_control_routes

    add_control_routes(app, node)
    return app
