"""The endpoints themselves: https://127.0.0.1:P/endpoints/<id>/... in front of a tiny model replica.

Behaviour, as HF's proxy does it (hf-api.md §1.5, §2) with wording chosen where HF's is unknown:
- Unknown or deleted id: 404 `{"error": "Endpoint not found"}`.
- Auth: `public` answers anyone; other types need a Bearer token with
  inference.endpoints.infer.write on the namespace (401 without or unknown, 403 without the scope).
  Auth comes before anything else, so an unauthenticated call never wakes an endpoint.
- Health route: forwarded when running (or updating), else 503 without waking anything.
- Inference on a scaledToZero endpoint wakes it (→ initializing). Without X-Scale-Up-Timeout the
  answer is 503 at once; with it (seconds, fractions accepted) the request is held until running,
  then forwarded, or 503 `{"error": "Scale up timeout"}` when it expires. Requests arriving while
  pending/initializing behave the same way (503, or held with the header).
- Paused: 503 `{"error": "Endpoint is paused"}`; failed/updateFailed: 503 with the HF message.
- The replica serves /v1/chat/completions (stream_options passed through), /v1/completions,
  /v1/models (the repository is the model id) and /health. An endpoint on HF's default engine (TGI)
  answers /info and /v1/models as TGI does (``tgi.py``): the context window in /info only.
"""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from app.simulator import tgi
from app.simulator.endpoints_model import Endpoint
from app.simulator.httputil import bearer, hf_error, unauthorized
from app.simulator.state import SimState, sim
from app.simulator.tokens import ENDPOINTS_INFER

STARTING = ("pending", "initializing", "scaledToZero")
UNAVAILABLE = {
    "paused": "Endpoint is paused",
    "failed": "Endpoint failed to deploy",
    "updateFailed": "Endpoint failed to update",
}


def _auth(request: web.Request, state: SimState, ep: Endpoint) -> web.Response | None:
    if ep.config.get("type") == "public":
        return None
    info = state.tokens.get(bearer(request))
    if info is None:
        return unauthorized()
    if not info.allows(ep.namespace, ENDPOINTS_INFER):
        return hf_error(403, f"missing permissions: {ENDPOINTS_INFER}")
    return None


def _hold_seconds(request: web.Request) -> float | None:
    raw = request.headers.get("X-Scale-Up-Timeout")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


async def _wait_running(state: SimState, ep: Endpoint, hold_s: float) -> bool:
    deadline = time.monotonic() + hold_s
    while True:
        state.endpoints.advance(ep)
        if ep.state in ("running", "updating"):
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0 or ep.state not in STARTING or state.endpoints.by_id(ep.id) is None:
            return False
        step = state.endpoints.next_change_in(ep)
        await asyncio.sleep(min(remaining, 0.05 if step is None else max(step, 0.005)))


async def _replica_url(state: SimState, ep: Endpoint) -> str:
    if ep.tiny is None:
        ep.tiny = await state.upstreams.start_tiny([ep.repository], *tgi.image_window(ep))
    return ep.tiny.url


async def serve(request: web.Request) -> web.StreamResponse:
    state = sim(request)
    ep = state.endpoints.by_id(request.match_info["eid"])
    if ep is None:
        return hf_error(404, "Endpoint not found")
    denied = _auth(request, state, ep)
    if denied is not None:
        return denied
    tail = "/" + request.match_info["tail"]
    is_health = tail.rstrip("/") == "/health"
    if is_health:
        ep.health_requests += 1
        if ep.state not in ("running", "updating"):
            return hf_error(503, UNAVAILABLE.get(ep.state, f"Endpoint is {ep.state}"))
        return await state.upstreams.relay(request, await _replica_url(state, ep) + tail)

    ep.requests += 1
    if ep.state in UNAVAILABLE:
        return hf_error(503, UNAVAILABLE[ep.state])
    if ep.state == "scaledToZero":
        state.endpoints.set_state(ep, "initializing")
    if ep.state in STARTING:
        hold = _hold_seconds(request)
        if hold is None:
            return hf_error(503, "Service Unavailable: the endpoint is starting, retry later")
        if not await _wait_running(state, ep, hold):
            return hf_error(503, "Scale up timeout")
    state.endpoints.touch(ep)
    replica = await _replica_url(state, ep)
    if request.method == "GET" and tail.rstrip("/") in tgi.TGI_ROUTES and tgi.runs_tgi(ep):
        return await tgi.answer(state.upstreams, ep, replica, tail.rstrip("/"))
    body = await request.read()
    url = replica + tail
    if request.query_string:
        url += "?" + request.query_string
    try:
        return await state.upstreams.relay(request, url, body=body)
    finally:
        state.endpoints.touch(ep)  # a long stream is activity until its last byte


def add_routes(app: web.Application) -> None:
    app.router.add_route("*", "/endpoints/{eid:[a-z0-9]{16}}/{tail:.*}", serve)
