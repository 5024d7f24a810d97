"""Control routes under /_pairwise/v1/hf: how `pairwise hf ...` reaches the node's HfService.
The token arrives once (login) and is never sent back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from app.services.errors import ConfigError, PairwiseError
from app.services.frontdoor.control import json_body
from app.services.hf.rented_ops import HfRented
from app.services.hf.service import HfService

Route = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]


def hf_routes(hf: HfService) -> list[Route]:
    async def login(request: web.Request) -> web.Response:
        token = (await json_body(request)).get("token")
        if not isinstance(token, str):
            raise PairwiseError("the body needs a 'token'", title="Bad request")
        return web.json_response(await hf.login(token))

    async def logout(request: web.Request) -> web.Response:
        await hf.logout(force=(await json_body(request)).get("yes") is True)
        return web.json_response({"signed_in": False})

    async def status(request: web.Request) -> web.Response:
        return web.json_response(await hf.status())

    async def catalog(request: web.Request) -> web.Response:
        models = await hf.catalog(request.query.get("search") or None)
        return web.json_response({"models": [m.to_json() for m in models]})

    async def hardware(request: web.Request) -> web.Response:
        rows = await hf.hardware(request.query.get("namespace") or None)
        return web.json_response({"hardware": [r.to_json() for r in rows]})

    async def endpoints(request: web.Request) -> web.Response:
        namespace = await hf.namespace(request.query.get("namespace") or None)
        found = await hf.client().list_endpoints(namespace)
        return web.json_response({"endpoints": [e.summary() for e in found]})

    return [
        ("POST", "/hf/login", login), ("POST", "/hf/logout", logout), ("GET", "/hf/status", status),
        ("GET", "/hf/catalog", catalog), ("GET", "/hf/hardware", hardware), ("GET", "/hf/endpoints", endpoints),
    ]


def hf_rented_routes(ops: HfRented) -> list[Route]:
    """POST /hf/rented/plan and /hf/rented (create); POST /hf/rented/{name}/pause|resume;
    DELETE /hf/rented/{name} with {"confirm": "<name>"} (irreversible on HF)."""

    async def plan(request: web.Request) -> web.Response:
        result = await ops.plan(await json_body(request))
        result.pop("body", None)
        return web.json_response(result)

    async def create(request: web.Request) -> web.Response:
        return web.json_response(await ops.create(await json_body(request)), status=201)

    async def pause(request: web.Request) -> web.Response:
        return web.json_response(await ops.pause(request.match_info["name"]))

    async def resume(request: web.Request) -> web.Response:
        return web.json_response(await ops.resume(request.match_info["name"]))

    async def delete(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if (await json_body(request)).get("confirm") != name:
            raise ConfigError(f"deleting {name} is irreversible on Hugging Face: confirm with {{\"confirm\": \"{name}\"}}")
        return web.json_response(await ops.delete(name))

    return [
        ("POST", "/hf/rented/plan", plan), ("POST", "/hf/rented", create),
        ("POST", "/hf/rented/{name}/pause", pause), ("POST", "/hf/rented/{name}/resume", resume),
        ("DELETE", "/hf/rented/{name}", delete),
    ]
