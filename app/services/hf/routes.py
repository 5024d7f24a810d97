"""Hugging Face's control routes (under /_pairwise/v1, behind the node's control token): HTTP adapters
over ``HfApi`` and the rented-node API, registered as Hugging Face's part of the service API
(``api/parts.py``) by ``register_hf_api``. A token only ever travels inward and is never echoed back.

    POST   /hf/login {"token"}, POST /hf/logout {"yes"?: true}, GET /hf/status
    GET    /hf/catalog?search=, /hf/hardware?namespace=, /hf/endpoints?namespace=
    POST   /hf/rented/plan, POST /hf/rented (create): an ``EndpointOrder`` (orders.py), the new node's
           settings nested as its declaration: {"budget": {"usd_per_day": 5}, "lifecycle": {...}}
    POST   /hf/rented/{name}/pause | resume, DELETE /hf/rented/{name}: older spellings of
           /rented/{name}/{action}, kept answering for scripts written against them
    batch windows (/hf/jobs):   see routes_jobs.py
"""

from __future__ import annotations

from aiohttp import web

from app.services.api import glossary
from app.services.api.parts import register_part
from app.services.api.rented import RentedApi
from app.services.errors import PairwiseError
from app.services.frontdoor.control import ControlRoute, json_body
from app.services.hf.api import HfApi
from app.services.hf.providers import ENDPOINT
from app.services.hf.routes_jobs import windows_routes
from app.services.hf.words import COMPANY, LABELS

Route = ControlRoute


def register_hf_api() -> None:
    """Hugging Face's part of the service API: ``api.part(HfApi)``, the routes below, its words."""
    for provider, label in LABELS.items():
        glossary.name_provider(provider, label, COMPANY)
    register_part("hf", HfApi, lambda hf, rented: [*hf_routes(hf, rented), *windows_routes(rented)])


def hf_routes(hf: HfApi, rented: RentedApi) -> list[Route]:
    async def login(request: web.Request) -> web.Response:
        token = (await json_body(request)).get("token")
        if not isinstance(token, str):
            raise PairwiseError("the body needs a 'token'", title="Bad request")
        return web.json_response(await hf.login(token))

    async def logout(request: web.Request) -> web.Response:
        return web.json_response(await hf.logout(force=(await json_body(request)).get("yes") is True))

    async def status(request: web.Request) -> web.Response:
        return web.json_response(await hf.status())

    async def catalog(request: web.Request) -> web.Response:
        return web.json_response({"models": await hf.catalog(request.query.get("search") or None)})

    async def hardware(request: web.Request) -> web.Response:
        return web.json_response({"hardware": await hf.hardware(request.query.get("namespace") or None)})

    async def endpoints(request: web.Request) -> web.Response:
        return web.json_response({"endpoints": await hf.endpoints(request.query.get("namespace") or None)})

    async def plan(request: web.Request) -> web.Response:
        result = await rented.plan(await json_body(request), ENDPOINT)
        result.pop("body", None)
        return web.json_response(result)

    async def create(request: web.Request) -> web.Response:
        return web.json_response(await rented.create(await json_body(request), ENDPOINT), status=201)

    async def pause(request: web.Request) -> web.Response:
        return web.json_response(await rented.pause(request.match_info["name"]))

    async def resume(request: web.Request) -> web.Response:
        return web.json_response(await rented.resume(request.match_info["name"]))

    async def delete(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        endpoint = rented.show(name)["endpoint"]
        confirm = (await json_body(request)).get("confirm")
        await rented.act(name, "delete", confirm=confirm if isinstance(confirm, str) else None)
        return web.json_response({"deleted": endpoint, "detached": name})

    return [
        ("POST", "/hf/login", login), ("POST", "/hf/logout", logout), ("GET", "/hf/status", status),
        ("GET", "/hf/catalog", catalog), ("GET", "/hf/hardware", hardware), ("GET", "/hf/endpoints", endpoints),
        ("POST", "/hf/rented/plan", plan), ("POST", "/hf/rented", create),
        ("POST", "/hf/rented/{name}/pause", pause), ("POST", "/hf/rented/{name}/resume", resume),
        ("DELETE", "/hf/rented/{name}", delete),
    ]
