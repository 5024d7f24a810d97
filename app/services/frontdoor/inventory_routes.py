"""Model listings in both APIs: every model this node can reach, each once."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from aiohttp import web

from app.services.backends.engine import EngineUpstream
from app.services.frontdoor.http import read_json_body, shaped_error
from app.services.frontdoor.listing import (
    OLLAMA_API_VERSION,
    engine_show,
    iso,
    loaded_row,
    looks_like_embedding,
    ollama_row,
    openai_row,
    synthesized_show,
)
from app.services.json_types import JsonObject
from app.services.keys.auth import key_may_see_model, refuse_model
from app.services.translate.shapes import canonical_model

if TYPE_CHECKING:
    from app.services.frontdoor.context import DoorNode


def add_inventory_routes(app: web.Application, node: DoorNode) -> None:
    def merged(request: web.Request) -> list[tuple[str, JsonObject, list[str]]]:
        rows = []
        for _canonical, all_owners in sorted(node.registry.inventory().items()):
            owners = [(u, e) for u, e in all_owners if u.listed]
            if not owners:
                continue
            first_upstream, first_entry = owners[0]
            if not key_may_see_model(request, first_entry.name):  # a key lists only the models it may use
                continue
            where = sorted({u.display_name() for u, _ in owners})
            rows.append((first_entry.name, first_entry.details, where))
        return rows

    async def tags(request: web.Request) -> web.Response:
        await node.refresh_stale()
        return web.json_response({"models": [ollama_row(n, d) for n, d, _ in merged(request)]})

    async def ps(request: web.Request) -> web.Response:
        # What the engines report loaded (backends/engine_facts.py), through peers too; a rented node
        # that may serve now holds its model.
        await node.refresh_stale()
        running = []
        for _canonical, owners in sorted(node.registry.inventory().items()):
            listed = [(u, e) for u, e in owners if u.listed and key_may_see_model(request, e.name)]
            rows = [loaded_row(e.name, e.details) for u, e in listed]
            row = next((r for r in rows if r is not None), None)
            if row is None:
                rented = next((e for u, e in listed if u.kind == "rented" and u.ineligible_reason() is None), None)
                if rented is None:
                    continue
                row = ollama_row(rented.name, rented.details)
                row.update({"expires_at": iso(time.time() + 300), "size_vram": 0})
            running.append(row)
        return web.json_response({"models": running})

    async def version(request: web.Request) -> web.Response:
        return web.json_response({"version": OLLAMA_API_VERSION})

    async def show(request: web.Request) -> web.Response:
        body = await read_json_body(request, "ollama", 65536)
        if isinstance(body, web.Response):
            return body
        name = body.get("model") or body.get("name")
        if not isinstance(name, str):
            return shaped_error("ollama", 400, "the request has no 'model'")
        refused = refuse_model(request, "ollama", name)  # a scoped key reads no other model's template
        if refused is not None:
            return refused
        await node.refresh_stale()
        owners = [(u, e) for u, e in node.registry.inventory().get(canonical_model(name), []) if u.listed]
        if not owners:
            return shaped_error("ollama", 404, f"model '{name}' not found")
        upstream, entry = owners[0]
        said = engine_show(entry.details)
        if said is not None and not isinstance(upstream, EngineUpstream):
            return web.json_response(said)  # a peer's engine's answer, as the owning node got it
        if isinstance(upstream, EngineUpstream):
            passed = await upstream.show(entry.name)  # an Ollama engine's own answer, as it gave it
            if passed is not None:
                return web.json_response(passed)
        # What the owning node's probe learnt of its engine (backends/engine_facts.py), ours or a peer's:
        # this node never probes a peer's or a rented model, and a peer's word covers its own copy only.
        embedding = looks_like_embedding(entry.name) or entry.details.get("embeds") is True
        return web.json_response(synthesized_show(entry.name, entry.details, embedding))

    async def v1_models(request: web.Request) -> web.Response:
        await node.refresh_stale()
        return web.json_response({"object": "list", "data": [openai_row(n, d) for n, d, _ in merged(request)]})

    async def v1_model(request: web.Request) -> web.Response:
        model_id = request.match_info["model_id"]
        refused = refuse_model(request, "openai", model_id)
        if refused is not None:
            return refused
        owners = [(u, e) for u, e in node.registry.inventory().get(canonical_model(model_id), []) if u.listed]
        if not owners:
            return shaped_error("openai", 404, f"The model '{model_id}' does not exist")
        return web.json_response(openai_row(model_id, owners[0][1].details))  # the id as the caller asked

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
