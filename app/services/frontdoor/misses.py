"""What the front door says where it has no inference to give: Ollama's management routes (an
Ollama-shaped error naming Pairwise and what to do), any unknown route (an error in the caller's
API shape, never aiohttp's bare text), and OPTIONS (the route's allowed methods for an app; a
browser's CORS preflight refused, since the front door accepts no cross-origin calls and no answer
carries Access-Control-Allow-Origin)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web

from app.services.translate.shapes import error_body

if TYPE_CHECKING:
    from app.services.frontdoor.context import DoorNode

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def shaped(path: str, status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """An error as the caller's API writes it: Anthropic's for /v1/messages, OpenAI's under /v1/, else Ollama's."""
    if path.startswith("/v1/messages"):
        # Loaded with the dialect (a node nobody asks in Anthropic's API never imports its translators).
        from app.services.translate.anthropic_answer import error_body as anthropic_error

        body = anthropic_error(status, message)
    else:
        body = error_body("openai" if path.startswith("/v1/") else "ollama", message, status=status)
    return web.json_response(body, status=status, headers=headers)


@web.middleware
async def shaped_misses(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.method == "OPTIONS" and request.headers.get("Origin") is not None:
        return shaped(request.path, 403, "refused: the front door answers apps on this machine and accepts no "
                                         "cross-origin (browser) requests, so it answers no CORS preflight")
    try:
        return await handler(request)
    except web.HTTPMethodNotAllowed as exc:
        allowed = ", ".join(sorted({*exc.allowed_methods, "OPTIONS"}))
        if request.method == "OPTIONS":
            return web.Response(status=204, headers={"Allow": allowed})
        return shaped(request.path, 405, f"{request.method} is not answered at {request.path}; it takes {allowed}",
                      headers={"Allow": allowed})
    except web.HTTPNotFound:
        return shaped(request.path, 404, f"Pairwise has no route {request.method} {request.path} (it answers "
                                         "Ollama's /api/*, OpenAI's /v1/chat/completions, /v1/completions, "
                                         "/v1/embeddings, /v1/responses, /v1/models and Anthropic's /v1/messages)")


MANAGEMENT = (("POST", "/api/pull"), ("POST", "/api/push"), ("POST", "/api/create"), ("POST", "/api/copy"),
              ("DELETE", "/api/delete"), ("HEAD", "/api/blobs/{digest}"), ("POST", "/api/blobs/{digest}"))


def add_management_routes(app: web.Application, node: DoorNode) -> None:
    """Ollama's model management: Pairwise routes to engines and manages none of their models."""

    async def refuse(request: web.Request) -> web.Response:
        engines = [u.decl.url for u in node.engines.upstreams.values() if u.decl.api == "ollama"]
        where = (f"this node's Ollama engines: {', '.join(engines)}, e.g. OLLAMA_HOST={engines[0]} "
                 "ollama pull MODEL" if engines else "OLLAMA_HOST pointed at the engine, e.g. "
                 "OLLAMA_HOST=http://127.0.0.1:11435 ollama pull MODEL")
        action = request.path.split("/")[2]
        message = (f"Pairwise answers at this address and routes to the engines of your machines; it does not "
                   f"{action} models. Do it on the engine's own machine with `ollama {action}`, or with {where}; "
                   "a model pulled there appears here by itself")
        if request.method == "HEAD":
            return web.Response(status=501)
        return web.json_response({"error": message}, status=501)

    for method, path in MANAGEMENT:
        app.router.add_route(method, path, refuse)
