"""``attach_cluster(node)``: makes a node a cluster member.

Adds the cluster service's start and stop hooks, peers as a dynamic source
of upstreams, peer rows for ``pairwise nodes``, and the control routes the
CLI uses (under /_pairwise/v1, behind the node's control token)::

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

from typing import TYPE_CHECKING, Any

from aiohttp import web

from app.services.cluster.pairing_protocol import PairingError
from app.services.cluster.peers import normalize_address
from app.services.cluster.service import ClusterService
from app.services.cluster.trust import PeerPin
from app.services.errors import ConfigError
from app.services.frontdoor.control import json_body

if TYPE_CHECKING:
    from app.services.node import Node


def attach_cluster(node: Node) -> ClusterService:
    cluster = ClusterService(node)
    node.start_hooks.append(cluster.start)
    node.stop_last.append(cluster.stop)
    node.registry.add_dynamic(cluster.peers.upstreams)
    node.fact_providers.append(cluster.peers.rows)
    node.extra_control_routes.extend(control_routes(cluster))
    return cluster


def pin_row(pin: PeerPin) -> dict[str, Any]:
    return {"id": pin.node_id, "name": pin.name, "address": pin.address, "fingerprint": pin.fingerprint,
            "paired_at": pin.paired_at.isoformat()}


def _number(data: dict[str, Any], key: str, default: float | None) -> float | None:
    value = data.get(key, default)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{key} must be a positive number of seconds")
    return float(value)


def control_routes(cluster: ClusterService) -> list[tuple[str, str, Any]]:
    async def invite(request: web.Request) -> web.Response:
        data = await json_body(request)
        made = await cluster.require_pairing().invite(_number(data, "ttl_s", 300.0) or 300.0)
        return web.json_response({"pin": made.pin, "address": made.address,
                                  "expires_at": made.expires_at.isoformat()})

    async def invite_status(request: web.Request) -> web.Response:
        return web.json_response(cluster.require_pairing().status())

    async def invite_cancel(request: web.Request) -> web.Response:
        await cluster.require_pairing().cancel()
        return web.json_response(cluster.require_pairing().status())

    async def wait(request: web.Request) -> web.Response:
        timeout_s = _number(await json_body(request), "timeout_s", None)
        try:
            pin = await cluster.require_pairing().wait(timeout_s)
        except TimeoutError as exc:
            raise PairingError(f"no node joined within {timeout_s:g} s; the invite is still pending") from exc
        return web.json_response({"paired": pin_row(pin)})

    async def join(request: web.Request) -> web.Response:
        data = await json_body(request)
        address, pin = data.get("address"), data.get("pin")
        if not isinstance(address, str) or not isinstance(pin, str):
            raise ConfigError("join needs 'address' (HOST[:PORT]) and 'pin'")
        peer = await cluster.require_pairing().join(address, pin)
        return web.json_response({"paired": pin_row(peer)})

    async def pair_list(request: web.Request) -> web.Response:
        return web.json_response({"peers": cluster.peers.peer_rows(),
                                  "pending_notices": [pin_row(p) for p in cluster.membership.pending]})

    async def pair_remove(request: web.Request) -> web.Response:
        return web.json_response(await cluster.membership.remove(request.match_info["node"]))

    async def peers_list(request: web.Request) -> web.Response:
        return web.json_response({"peers": cluster.peers.peer_rows(), "manual": cluster.peers.manual})

    async def peers_add(request: web.Request) -> web.Response:
        address = (await json_body(request)).get("address")
        if not isinstance(address, str):
            raise ConfigError("peers add needs 'address' (HOST:PORT of a paired node's cluster port)")
        normalized = normalize_address(address)
        peer = await cluster.peers.add_address(normalized)
        found = None
        if peer is not None:
            found = next((row for row in cluster.peers.peer_rows() if row["id"] == peer.node_id), None)
        return web.json_response({"found": found, "address": normalized})

    return [
        ("POST", "/pair/invite", invite), ("GET", "/pair/invite", invite_status),
        ("DELETE", "/pair/invite", invite_cancel), ("POST", "/pair/wait", wait), ("POST", "/pair/join", join),
        ("GET", "/pair", pair_list), ("DELETE", "/pair/{node}", pair_remove),
        ("GET", "/peers", peers_list), ("POST", "/peers", peers_add),
    ]
