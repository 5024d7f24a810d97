"""Control routes of the node's features: HTTP adapters over ``RentedApi`` and ``ClusterApi`` (a
provider's own routes are in its folder, registered as its part: parts.py).
A token only ever travels inward (CLI -> node over loopback) and is never echoed back.

    GET    /rented                  {"rented": [row...]}
    POST   /rented                  attach: a declaration's fields plus optional "token"
    POST   /rented/apply            {"declarations": [...], "token"?: str}
    GET    /rented/{name}           one row
    PATCH  /rented/{name}           {"changes": RentedChange, "token"?: str}: spelt as the declaration nests
                                    it ({"budget": {"usd_per_day": 5}}; "off" removes a cap), refused whole
                                    naming the first field that is wrong
    DELETE /rented/{name}           detach; {"yes": true} detaches even if a billing endpoint cannot be paused
    POST   /rented/{name}/probe     re-probe now (models, credential, public flag)
    POST   /rented/{name}/{action}  pause | resume | stop | delete, as its provider offers them (the row's
                                    ``actions``); delete needs {"confirm": "<name>"}; -> {"name", "action", "row"}
    POST   /spend/repair            {"accept_usd"?: float, "name"?: str}: a new spend account (spend.py)

    POST   /pair/invite      {"ttl_s"?}                -> {"pin", "address", "expires_at"}
    GET    /pair/invite                                -> the invite's state
    DELETE /pair/invite                                -> cancel it
    POST   /pair/wait        {"timeout_s"?}            -> {"paired": peer}
    POST   /pair/join        {"address", "pin"}        -> {"paired": peer}
    GET    /pair                                       -> {"peers", "pending_notices"}
    DELETE /pair/{node}                                -> removal, and whether the peer was told
    GET    /peers                                      -> {"peers", "manual"}
    POST   /peers            {"address"}               -> {"found": peer or null, "address"}
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from app.services.api.changes import RentedChange, parse_given
from app.services.api.cluster import ClusterApi
from app.services.api.rented import RentedApi
from app.services.errors import ConfigError
from app.services.frontdoor.control import Handler, json_body

Route = tuple[str, str, Handler]


def _token(data: dict[str, Any]) -> str | None:
    token = data.pop("token", None)
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ConfigError("token must be a non-empty string")
    return token.strip() if isinstance(token, str) else None


def _seconds(data: dict[str, Any], key: str, default: float | None) -> float | None:
    value = data.get(key, default)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{key} must be a positive number of seconds")
    return float(value)


def rented_routes(rented: RentedApi) -> list[Route]:
    async def list_all(request: web.Request) -> web.Response:
        return web.json_response({"rented": rented.list()})

    async def attach(request: web.Request) -> web.Response:
        data = await json_body(request)
        token = _token(data)
        return web.json_response(await rented.attach(data, token), status=201)

    async def apply(request: web.Request) -> web.Response:
        data = await json_body(request)
        token = _token(data)
        items = data.get("declarations")
        if not isinstance(items, list):
            raise ConfigError("apply needs {\"declarations\": [ {...}, ... ]}")
        return web.json_response({"rented": await rented.apply(items, token)})

    async def show(request: web.Request) -> web.Response:
        return web.json_response(rented.show(request.match_info["name"]))

    async def change(request: web.Request) -> web.Response:
        data = await json_body(request)
        token = _token(data)
        change = parse_given(RentedChange, data.get("changes") or {}, what="changes")
        return web.json_response(await rented.set(request.match_info["name"], change, token))

    async def detach(request: web.Request) -> web.Response:
        force = (await json_body(request)).get("yes") is True
        return web.json_response(await rented.detach(request.match_info["name"], force=force))

    async def probe(request: web.Request) -> web.Response:
        return web.json_response(await rented.probe(request.match_info["name"]))

    async def repair_spend(request: web.Request) -> web.Response:
        data = await json_body(request)
        accept, name = data.get("accept_usd"), data.get("name")
        if accept is not None and (isinstance(accept, bool) or not isinstance(accept, int | float)):
            raise ConfigError("accept_usd must be a number of USD")
        if name is not None and not isinstance(name, str):
            raise ConfigError("name must be a rented node's name")
        return web.json_response(rented.repair_spend(None if accept is None else float(accept), name))

    async def act(request: web.Request) -> web.Response:
        confirm = (await json_body(request)).get("confirm")
        return web.json_response(await rented.act(request.match_info["name"], request.match_info["action"],
                                                  confirm=confirm if isinstance(confirm, str) else None))

    return [
        ("GET", "/rented", list_all), ("POST", "/rented", attach), ("POST", "/rented/apply", apply),
        ("GET", "/rented/{name}", show), ("PATCH", "/rented/{name}", change),
        ("DELETE", "/rented/{name}", detach), ("POST", "/rented/{name}/probe", probe),
        ("POST", "/rented/{name}/{action}", act),
        ("POST", "/spend/repair", repair_spend),
    ]


def cluster_routes(cluster: ClusterApi) -> list[Route]:
    async def invite(request: web.Request) -> web.Response:
        made = await cluster.invite(_seconds(await json_body(request), "ttl_s", 300.0) or 300.0)
        return web.json_response({k: made[k] for k in ("pin", "address", "expires_at")})

    async def invite_status(request: web.Request) -> web.Response:
        return web.json_response(cluster.invite_status())

    async def invite_cancel(request: web.Request) -> web.Response:
        return web.json_response(await cluster.cancel())

    async def wait(request: web.Request) -> web.Response:
        return web.json_response({"paired": await cluster.wait(_seconds(await json_body(request), "timeout_s", None))})

    async def join(request: web.Request) -> web.Response:
        data = await json_body(request)
        address, pin = data.get("address"), data.get("pin")
        if not isinstance(address, str) or not isinstance(pin, str):
            raise ConfigError("join needs 'address' (HOST[:PORT]) and 'pin'")
        return web.json_response({"paired": await cluster.join(address, pin)})

    async def pair_list(request: web.Request) -> web.Response:
        return web.json_response(cluster.pairs())

    async def pair_remove(request: web.Request) -> web.Response:
        return web.json_response(await cluster.unpair(request.match_info["node"]))

    async def peers_list(request: web.Request) -> web.Response:
        return web.json_response({"peers": cluster.peers(), "manual": cluster.manual_peers()})

    async def peers_add(request: web.Request) -> web.Response:
        address = (await json_body(request)).get("address")
        if not isinstance(address, str):
            raise ConfigError("peers add needs 'address' (HOST:PORT of a paired node's cluster port)")
        return web.json_response(await cluster.add_peer(address))

    async def peer_rented(request: web.Request) -> web.Response:
        return web.json_response({"peer_rented": cluster.peer_rented()})

    async def set_peer_rented(request: web.Request) -> web.Response:
        data = await json_body(request)
        node, policy = data.get("node"), data.get("policy")
        if not isinstance(node, str) or not isinstance(policy, str):
            raise ConfigError("peer_rented needs 'node' (a peer's rented node, by name or id) and 'policy'")
        return web.json_response({"peer_rented": await cluster.set_peer_rented(node, policy)})

    return [
        ("POST", "/pair/invite", invite), ("GET", "/pair/invite", invite_status),
        ("DELETE", "/pair/invite", invite_cancel), ("POST", "/pair/wait", wait), ("POST", "/pair/join", join),
        ("GET", "/pair", pair_list), ("DELETE", "/pair/{node}", pair_remove),
        ("GET", "/peers", peers_list), ("POST", "/peers", peers_add),
        ("GET", "/settings/peer_rented", peer_rented), ("PUT", "/settings/peer_rented", set_peer_rented),
    ]
