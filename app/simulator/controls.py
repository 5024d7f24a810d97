"""Simulator controls under /_sim/ (never part of the HF surface; loopback only, no auth).

GET  /_sim/ledger                               billing ledger (see ledger.py)
GET  /_sim/settings, POST /_sim/settings        live durations: pending_s, initializing_s, job_scheduling_s,
                                                job_run_s, minute_s
POST /_sim/prices                               {"instanceType","instanceSize","pricePerHour"[,"vendor","region"]}
                                                or {"flavor","pricePerHour"} for a job flavor; endpoints that
                                                bill on that compute are charged the new price from now;
                                                "pricePerHour": null takes the compute out of the price list
                                                (HF no longer prices it; billing goes on at the last price)
POST /_sim/quota                                {"instanceType","maxAccelerators"}
POST /_sim/tokens                               {"token","user","role","scoped":{ns:[perms]},"global":[...],"orgs"?}
GET  /_sim/faults, POST /_sim/faults, DELETE /_sim/faults   see faults.py
POST /_sim/endpoints/{ns}/{name}/mutate         {"repository"?,"instanceType"?,"instanceSize"?,"state"?,"message"?}
                                                (a compute change while billing is charged at its price from now)
POST /_sim/endpoints/{ns}/{name}/resume         resume as another client would (HF's UI, a second machine)
DELETE /_sim/endpoints/{ns}/{name}              delete behind the client's back
GET  /_sim/endpoints/{ns}/{name}/requests       {"requests": inference calls received, "health_requests": n}
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from app.simulator.httputil import BadBody, read_body
from app.simulator.state import SimState, sim


def _bad(message: str) -> web.Response:
    return web.json_response({"error": message}, status=400)


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        return await read_body(request)
    except BadBody as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None


async def ledger(request: web.Request) -> web.Response:
    state = sim(request)
    for ep in state.endpoints.all():  # bring every open stretch up to now
        state.endpoints.advance(ep)
    for job in state.jobs.all():
        state.jobs.advance(job)
    return web.json_response(state.ledger.as_json(state.now(), state.settings.minute_s))


async def settings(request: web.Request) -> web.Response:
    state = sim(request)
    if request.method == "POST":
        changes = await _json(request)
        for ep in state.endpoints.all():  # settle transitions due under the old durations first
            state.endpoints.advance(ep)
        for job in state.jobs.all():
            state.jobs.advance(job)
        try:
            state.settings.update(changes)
        except ValueError as exc:
            return _bad(str(exc))
    return web.json_response(state.settings.live())


async def prices(request: web.Request) -> web.Response:
    state, body = sim(request), await _json(request)
    if "flavor" in body:
        price = body.get("pricePerHour")
        if body["flavor"] not in state.jobs.prices or not isinstance(price, int | float) or price < 0:
            return _bad("unknown flavor or bad pricePerHour")
        state.jobs.prices[body["flavor"]] = float(price)
        return web.json_response({"changed": 1})
    for ep in state.endpoints.all():  # settle what was due at the old price first
        state.endpoints.advance(ep)
    try:
        changed = state.hardware.set_price(body)
    except ValueError as exc:
        return _bad(str(exc))
    state.endpoints.reprice_all()
    return web.json_response({"changed": changed}) if changed else _bad("no such compute")


async def quota(request: web.Request) -> web.Response:
    state, body = sim(request), await _json(request)
    limit = body.get("maxAccelerators")
    if not isinstance(body.get("instanceType"), str) or not isinstance(limit, int) or limit < 0:
        return _bad("instanceType and a non-negative maxAccelerators are required")
    state.hardware.quota[body["instanceType"]] = limit
    return web.json_response(state.hardware.quota)


async def tokens(request: web.Request) -> web.Response:
    state, body = sim(request), await _json(request)
    try:
        info = state.tokens.register_from_json(body)
    except ValueError as exc:
        return _bad(str(exc))
    return web.json_response({"user": info.user, "role": info.role, "orgs": info.orgs})


async def faults(request: web.Request) -> web.Response:
    state = sim(request)
    if request.method == "POST":
        try:
            state.faults.add_from_json(await _json(request))
        except (ValueError, TypeError) as exc:
            return _bad(str(exc))
    elif request.method == "DELETE":
        state.faults.clear()
    return web.json_response(state.faults.as_json())


def _endpoint(state: SimState, request: web.Request) -> Any:
    ep = state.endpoints.get(request.match_info["namespace"], request.match_info["name"])
    if ep is None:
        raise web.HTTPNotFound(text='{"error": "no such endpoint"}', content_type="application/json")
    return ep


async def mutate(request: web.Request) -> web.Response:
    state = sim(request)
    ep, body = _endpoint(state, request), await _json(request)
    if "repository" in body:
        ep.config["model"]["repository"] = str(body["repository"])
        if ep.tiny is not None:
            ep.tiny.opts.models = [ep.repository]
    for key in ("instanceType", "instanceSize"):
        if key in body:
            ep.compute[key] = str(body[key])
    state.endpoints.reprice(ep)
    if "state" in body:
        if body["state"] not in ("failed", "updateFailed", "running", "paused", "scaledToZero", "initializing"):
            return _bad("unsupported state")
        state.endpoints.set_state(ep, body["state"], message=body.get("message"))
    elif "message" in body:
        ep.message = str(body["message"])
    return web.json_response(state.endpoints.to_json(ep))


async def resume(request: web.Request) -> web.Response:
    state = sim(request)
    ep = _endpoint(state, request)
    error = state.endpoints.resume(ep)
    if error:
        return _bad(error)
    return web.json_response(state.endpoints.to_json(ep))


async def delete_endpoint(request: web.Request) -> web.Response:
    state = sim(request)
    ep = _endpoint(state, request)
    state.endpoints.remove(ep)
    await state.upstreams.close_tiny(ep.tiny)
    return web.json_response({})


async def endpoint_requests(request: web.Request) -> web.Response:
    ep = _endpoint(sim(request), request)
    return web.json_response({"requests": ep.requests, "health_requests": ep.health_requests})


def add_routes(app: web.Application) -> None:
    app.router.add_get("/_sim/ledger", ledger)
    app.router.add_route("GET", "/_sim/settings", settings)
    app.router.add_route("POST", "/_sim/settings", settings)
    app.router.add_post("/_sim/prices", prices)
    app.router.add_post("/_sim/quota", quota)
    app.router.add_post("/_sim/tokens", tokens)
    for method in ("GET", "POST", "DELETE"):
        app.router.add_route(method, "/_sim/faults", faults)
    app.router.add_post("/_sim/endpoints/{namespace}/{name}/mutate", mutate)
    app.router.add_post("/_sim/endpoints/{namespace}/{name}/resume", resume)
    app.router.add_delete("/_sim/endpoints/{namespace}/{name}", delete_endpoint)
    app.router.add_get("/_sim/endpoints/{namespace}/{name}/requests", endpoint_requests)
