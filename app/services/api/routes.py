"""The control API's routes (under /_pairwise/v1, behind the node's control token): HTTP adapters
over ``NodeApi``, no rules of their own beyond reading the request. ``control_routes(api)`` is
what bootstrap gives the front door.

    GET    /status                                  the node's status
    GET    /nodes                                   {"nodes": [row...]}
    GET    /jobs?active=1&limit=N                   {"jobs": [record...]}
    GET    /events                                  NDJSON: each event's JSON form (events.py), plus
                                                    {"kind": "subscribed"|"keepalive"|"node_stopping"}
    GET    /engines, POST /engines, DELETE /engines/{name}
    GET    /settings                                {"off_lan": "allow"|"deny"}
    PATCH  /settings           {"off_lan"?}         change settings, spelt as GET reads them (allow | deny)
    rented nodes, pairing and peers:                see routes_features.py
    a provider's own routes:                        its part (parts.py), in its folder
    keys, the LAN door, spend by requester:         see routes_keys.py
    batches (plan, run, list, show, cancel, results): see routes_batch.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from app.services.api.changes import SettingsChange, parsed
from app.services.api.core import NodeApi
from app.services.api.routes_batch import batch_routes
from app.services.api.routes_features import cluster_routes, rented_routes
from app.services.api.routes_keys import keys_routes
from app.services.frontdoor.control import Handler, json_body, query_flag, query_int

Route = tuple[str, str, Handler]


def control_routes(api: NodeApi) -> list[Route]:
    async def status(request: web.Request) -> web.Response:
        return web.json_response(api.status())

    async def nodes(request: web.Request) -> web.Response:
        return web.json_response({"nodes": api.nodes()})

    async def jobs(request: web.Request) -> web.Response:
        active = query_flag(request, "active")
        limit = query_int(request, "limit", 50, low=1, high=10_000)
        return web.json_response({"jobs": api.jobs(active_only=active, limit=limit)})

    async def events(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        queue = api.subscribe()
        stopping = asyncio.ensure_future(api.stopping.wait())
        try:
            await response.write(json.dumps({"kind": "subscribed", "node": api.name}).encode() + b"\n")
            while not stopping.done():
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, stopping}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
                line: dict[str, Any]
                if getter in done:
                    line = getter.result().to_json()
                else:
                    getter.cancel()
                    line = {"kind": "node_stopping"} if stopping.done() else {"kind": "keepalive"}
                await response.write(json.dumps(line).encode() + b"\n")
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            stopping.cancel()
            api.unsubscribe(queue)
        return response

    async def engines_list(request: web.Request) -> web.Response:
        return web.json_response({"engines": api.engines()})

    async def engines_add(request: web.Request) -> web.Response:
        data = await json_body(request)
        credential = data.pop("token", None)
        return web.json_response(await api.engine_add(data, credential), status=201)

    async def engines_remove(request: web.Request) -> web.Response:
        return web.json_response(await api.engine_remove(request.match_info["name"]))

    async def settings(request: web.Request) -> web.Response:
        return web.json_response(api.settings())

    async def change_settings(request: web.Request) -> web.Response:
        return web.json_response(await api.change_settings(parsed(SettingsChange, await json_body(request))))

    return [
        ("GET", "/status", status), ("GET", "/nodes", nodes), ("GET", "/jobs", jobs), ("GET", "/events", events),
        ("GET", "/engines", engines_list), ("POST", "/engines", engines_add),
        ("DELETE", "/engines/{name}", engines_remove),
        ("GET", "/settings", settings), ("PATCH", "/settings", change_settings),
        *rented_routes(api.rented), *cluster_routes(api.cluster), *keys_routes(api.keys), *batch_routes(api.batches),
        *(route for part in api.parts for route in part.routes),
    ]
