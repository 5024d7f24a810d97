"""Control routes under /_pairwise/v1/rented (token-guarded by the node's control API).

GET    /rented                  {"rented": [row...]}
POST   /rented                  attach: a declaration's fields plus optional "token"
POST   /rented/apply            {"declarations": [...], "token"?: str}
GET    /rented/{name}           one row
PATCH  /rented/{name}           {"changes": {...}, "token"?: str}
DELETE /rented/{name}           detach; {"yes": true} detaches even if a billing endpoint cannot be paused
POST   /rented/{name}/probe     re-probe now (models, credential, public flag)

A token only ever travels inward (CLI → node over loopback) and is never echoed back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from app.services.errors import ConfigError
from app.services.frontdoor.control import json_body
from app.services.rented.manager import RentedManager

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _token(data: dict[str, Any]) -> str | None:
    token = data.pop("token", None)
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ConfigError("token must be a non-empty string")
    return token.strip() if isinstance(token, str) else None


def control_routes(manager: RentedManager) -> list[tuple[str, str, Handler]]:
    async def list_all(request: web.Request) -> web.Response:
        return web.json_response({"rented": manager.list()})

    async def attach(request: web.Request) -> web.Response:
        data = await json_body(request)
        token = _token(data)
        return web.json_response(await manager.attach(data, token), status=201)

    async def apply(request: web.Request) -> web.Response:
        data = await json_body(request)
        token = _token(data)
        items = data.get("declarations")
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise ConfigError("apply needs {\"declarations\": [ {...}, ... ]}")
        return web.json_response({"rented": await manager.apply(items, token)})

    async def show(request: web.Request) -> web.Response:
        return web.json_response(manager.show(request.match_info["name"]))

    async def change(request: web.Request) -> web.Response:
        data = await json_body(request)
        token = _token(data)
        changes = data.get("changes") or {}
        if not isinstance(changes, dict):
            raise ConfigError("changes must be an object")
        return web.json_response(await manager.set(request.match_info["name"], changes, token))

    async def detach(request: web.Request) -> web.Response:
        force = (await json_body(request)).get("yes") is True
        await manager.detach(request.match_info["name"], force=force)
        return web.json_response({"detached": request.match_info["name"]})

    async def probe(request: web.Request) -> web.Response:
        node = manager.get(request.match_info["name"])
        await node.probe()
        manager.changed(f"rented node {node.name} probed")
        return web.json_response(manager.show(node.name))

    return [
        ("GET", "/rented", list_all), ("POST", "/rented", attach), ("POST", "/rented/apply", apply),
        ("GET", "/rented/{name}", show), ("PATCH", "/rented/{name}", change),
        ("DELETE", "/rented/{name}", detach), ("POST", "/rented/{name}/probe", probe),
    ]
