"""Model listings in both APIs: every model this node can reach, each once."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from app.services.frontdoor.http import read_json_body, shaped_error
from app.services.keys.auth import key_allows
from app.services.translate.shapes import canonical_model

if TYPE_CHECKING:
    from app.services.node import Node

VERSION = "0.6.0"  # the Ollama API version whose shapes we follow


def _iso(ts: float | None = None) -> str:
    return datetime.fromtimestamp(ts or time.time(), UTC).isoformat().replace("+00:00", "Z")


def ollama_model_row(name: str, details: dict[str, Any]) -> dict[str, Any]:
    raw = details.get("details")
    inner: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {
        "name": name,
        "model": name,
        "modified_at": details.get("modified_at") or _iso(),
        "size": details.get("size") or 0,
        "digest": details.get("digest") or "",
        "details": {
            "parent_model": inner.get("parent_model", ""),
            "format": inner.get("format", "gguf"),
            "family": inner.get("family", ""),
            "families": inner.get("families") or [],
            "parameter_size": inner.get("parameter_size", ""),
            "quantization_level": inner.get("quantization_level", ""),
        },
    }


def add_inventory_routes(app: web.Application, node: Node) -> None:
    def merged(request: web.Request) -> list[tuple[str, dict[str, Any], list[str]]]:
        rows = []
        for _canonical, all_owners in sorted(node.registry.inventory().items()):
            owners = [(u, e) for u, e in all_owners if u.listed]
            if not owners:
                continue
            first_upstream, first_entry = owners[0]
            if not key_allows(request, first_entry.name):  # a key lists only the models it may use
                continue
            where = sorted({u.display_name() for u, _ in owners})
            rows.append((first_entry.name, first_entry.details, where))
        return rows

    async def tags(request: web.Request) -> web.Response:
        await node.refresh_stale()
        return web.json_response({"models": [ollama_model_row(n, d) for n, d, _ in merged(request)]})

    async def ps(request: web.Request) -> web.Response:
        running = []
        for name, details, _ in merged(request):
            row = ollama_model_row(name, details)
            row.update({"expires_at": _iso(time.time() + 300), "size_vram": 0})
            running.append(row)
        return web.json_response({"models": running})

    async def version(request: web.Request) -> web.Response:
        return web.json_response({"version": VERSION})

    async def show(request: web.Request) -> web.Response:
        body = await read_json_body(request, "ollama", 65536)
        if isinstance(body, web.Response):
            return body
        name = body.get("model") or body.get("name")
        if not isinstance(name, str):
            return shaped_error("ollama", 400, "the request has no 'model'")
        owners = node.registry.inventory().get(canonical_model(name))
        if not owners:
            return shaped_error("ollama", 404, f"model '{name}' not found")
        row = ollama_model_row(owners[0][1].name, owners[0][1].details)
        return web.json_response({
            "modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
            "details": row["details"], "model_info": {}, "capabilities": ["completion"],
            "modified_at": row["modified_at"],
        })

    def openai_row(name: str, details: dict[str, Any]) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": int(details.get("created") or 0) or int(time.time()),
                "owned_by": details.get("owned_by") or "pairwise"}

    async def v1_models(request: web.Request) -> web.Response:
        await node.refresh_stale()
        return web.json_response({"object": "list", "data": [openai_row(n, d) for n, d, _ in merged(request)]})

    async def v1_model(request: web.Request) -> web.Response:
        model_id = request.match_info["model_id"]
        owners = node.registry.inventory().get(canonical_model(model_id))
        if not owners:
            return shaped_error("openai", 404, f"The model '{model_id}' does not exist")
        return web.json_response(openai_row(owners[0][1].name, owners[0][1].details))

    app.router.add_get("/api/tags", tags)
    app.router.add_get("/api/ps", ps)
    app.router.add_get("/api/version", version)
    app.router.add_post("/api/show", show)
    app.router.add_get("/v1/models", v1_models)
    app.router.add_get("/v1/models/{model_id:.+}", v1_model)
    app.router.add_get("/", root)


async def root(request: web.Request) -> web.Response:
    # Ollama answers "Ollama is running" here; some clients probe it.
    return web.Response(text="Pairwise is running")
