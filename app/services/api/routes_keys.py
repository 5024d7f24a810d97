"""Control routes for keys, the LAN door and per-requester spend: HTTP adapters over ``KeysApi``.

GET    /keys                      {"keys": [record...]}        (never a key, never a digest)
POST   /keys                      {"name", "models"?, "off_lan"?, "usd_per_day"?, "requests_per_min"?}
                                  -> 201 {..record, "key": "pw-..."}: the only time the key is sent
DELETE /keys/{name}               revoke (at once)
GET    /lan                       the LAN door's status (address, fingerprint, keys)
PUT    /lan                       {"listen": "HOST:PORT" | null}: open or close it, remembered
GET    /lan/cert                  {"pem", "fingerprint"}: the node certificate clients pin
GET    /requesters/today?rented=  spend today on one of this node's rented nodes, by requester
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from app.services.api.changes import NewKey, parsed
from app.services.api.keys import KeysApi
from app.services.errors import ConfigError, FeatureMissing
from app.services.frontdoor.control import json_body

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def keys_routes(keys: KeysApi) -> list[tuple[str, str, Handler]]:
    async def list_keys(request: web.Request) -> web.Response:
        return web.json_response({"keys": keys.list()})

    async def create_key(request: web.Request) -> web.Response:
        created = keys.create(parsed(NewKey, await json_body(request)))
        return web.json_response(created, status=201, headers={"Cache-Control": "no-store"})

    async def revoke_key(request: web.Request) -> web.Response:
        return web.json_response(keys.revoke(request.match_info["name"]))

    async def lan(request: web.Request) -> web.Response:
        status = keys.lan_status()
        if status is None:
            raise FeatureMissing("this node has no keys or LAN door attached")
        return web.json_response(status)

    async def set_lan(request: web.Request) -> web.Response:
        data = await json_body(request)
        listen = data.get("listen")
        if listen is not None and (not isinstance(listen, str) or not listen.strip()):
            raise ConfigError("listen must be HOST:PORT, or null to close the LAN door")
        return web.json_response(await keys.set_lan(listen.strip() if listen else None))

    async def cert(request: web.Request) -> web.Response:
        return web.json_response(keys.door_cert())

    async def today(request: web.Request) -> web.Response:
        name = request.query.get("rented", "")
        if not name:
            raise ConfigError("give the rented node's name: ?rented=NAME")
        return web.json_response({"rented": name, "today": keys.today(name)})

    return [
        ("GET", "/keys", list_keys), ("POST", "/keys", create_key), ("DELETE", "/keys/{name}", revoke_key),
        ("GET", "/lan", lan), ("PUT", "/lan", set_lan), ("GET", "/lan/cert", cert),
        ("GET", "/requesters/today", today),
    ]
