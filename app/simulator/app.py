"""The simulator's aiohttp application: every route module plus the fault and labelling middleware."""

from __future__ import annotations

import asyncio

from aiohttp import web

from app.simulator import controls, endpoint_proxy, endpoints_api, hub_api, jobs_api, router
from app.simulator.faults import CUT_DONE_KEY, CUT_KEY, Handler, apply, cut_body
from app.simulator.httputil import SIM_HEADER
from app.simulator.state import STATE_KEY, SimState, sim


def fault_target(state: SimState, path: str) -> str | None:
    """Which fault target a request path belongs to (None for /_sim/ and unknown paths)."""
    if path.startswith("/v2/"):
        return "management"
    if path.startswith(("/api/catalog/", "/api/v1/catalog/")):
        return "catalog"
    if path.startswith("/api/"):
        return "hub"
    if path.startswith("/router/"):
        return "router"
    parts = path.split("/")
    if path.startswith("/endpoints/") and len(parts) > 2:
        ep = state.endpoints.by_id(parts[2])
        return f"endpoint:{ep.key}" if ep else None
    if path.startswith("/jobs-expose/") and len(parts) > 2:
        job_id = parts[2].split("--")[0]
        job = next((j for j in state.jobs.all() if j.id == job_id), None)
        return f"job:{job.key}" if job else None
    return None


@web.middleware
async def _faults(request: web.Request, handler: Handler) -> web.StreamResponse:
    state = sim(request)
    target = fault_target(state, request.path)
    fault = state.faults.take(target, request.path, request.method) if target else None
    if fault is not None:
        replaced = await apply(request, fault, state.closing)
        if replaced is not None:
            return replaced
    response = await handler(request)
    if fault is not None and fault.kind == "late":
        await asyncio.sleep(fault.delay_s)
    if (request.get(CUT_KEY) is not None and not request.get(CUT_DONE_KEY)
            and isinstance(response, web.Response) and not response.prepared):
        return await cut_body(request, response)
    return response


async def _label(request: web.Request, response: web.StreamResponse) -> None:
    # Everything the simulator answers says so, errors included.
    response.headers[SIM_HEADER[0]] = SIM_HEADER[1]


def build_app(state: SimState) -> web.Application:
    app = web.Application(middlewares=[_faults], client_max_size=32 * 1024 * 1024)
    app[STATE_KEY] = state
    app.on_response_prepare.append(_label)
    controls.add_routes(app)
    endpoints_api.add_routes(app)
    hub_api.add_routes(app)  # before jobs: /api/jobs/{ns}/auth-check/{perms} must win
    jobs_api.add_routes(app)
    router.add_routes(app)
    endpoint_proxy.add_routes(app)
    return app
