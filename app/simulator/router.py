"""The Inference Providers router under /router/v1 (hf-api.md §5), billed per token.

`model` may carry a suffix: `:fastest` (default, highest throughput), `:cheapest`, `:preferred`
(first listed) or `:<provider>`. Calls need inference.serverless.write for the user (or for the org
named in X-HF-Bill-To). Streams always ask the replica for usage so every call is billed; the usage
chunk reaches the client only when it asked for stream_options.include_usage. Model errors use the
OpenAI error shape, as OpenAI-compatible clients expect from this route.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from app.simulator.httputil import bearer, hf_error, unauthorized
from app.simulator.state import SimState, sim
from app.simulator.tokens import SERVERLESS

_CREATED = 1_750_000_000


def _openai_error(status: int, message: str, code: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error", "param": "model",
                                        "code": code}}, status=status)


def _model_json(model: str, providers: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": _CREATED, "owned_by": model.split("/")[0],
            "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]}, "providers": providers}


def _pick(state: SimState, requested: str) -> tuple[str, dict[str, Any]] | web.Response:
    base, _, suffix = requested.partition(":")
    providers = state.router_models.get(base)
    if not providers:
        return _openai_error(404, f"The requested model '{base}' does not exist", "model_not_found")
    live = [p for p in providers if p["status"] == "live"]
    if suffix in ("", "fastest"):
        chosen = max(live, key=lambda p: p.get("throughput") or 0.0, default=None)
    elif suffix == "cheapest":
        chosen = min(live, key=lambda p: p["pricing"]["input"] + p["pricing"]["output"], default=None)
    elif suffix == "preferred":
        chosen = live[0] if live else None
    else:
        chosen = next((p for p in live if p["provider"] == suffix), None)
    if chosen is None:
        return _openai_error(400, f"Model '{base}' is not served by provider '{suffix}'", "model_not_supported")
    return base, chosen


async def _replica(state: SimState) -> str:
    if state.router_tiny is None:
        state.router_tiny = await state.upstreams.start_tiny(list(state.router_models))
    return state.router_tiny.url


async def list_models(request: web.Request) -> web.StreamResponse:
    models = sim(request).router_models
    return web.json_response({"object": "list", "data": [_model_json(m, p) for m, p in models.items()]})


async def get_model(request: web.Request) -> web.StreamResponse:
    model = request.match_info["model"]
    providers = sim(request).router_models.get(model)
    if providers is None:
        return _openai_error(404, f"The requested model '{model}' does not exist", "model_not_found")
    return web.json_response(_model_json(model, providers))


async def chat_completions(request: web.Request) -> web.StreamResponse:
    state = sim(request)
    info = state.tokens.get(bearer(request))
    if info is None:
        return unauthorized()
    payer = request.headers.get("X-HF-Bill-To") or info.user
    if not info.allows(payer, SERVERLESS):
        return hf_error(403, f"missing permissions: {SERVERLESS}")
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        return _openai_error(400, "Invalid JSON body", "invalid_json")
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return _openai_error(400, "'model' is required", "invalid_request")
    picked = _pick(state, body["model"])
    if isinstance(picked, web.Response):
        return picked
    base, provider = picked
    tally_key = f"{base}:{provider['provider']}"
    price_in, price_out = provider["pricing"]["input"], provider["pricing"]["output"]
    url = await _replica(state) + "/v1/chat/completions"
    body["model"] = base
    if not body.get("stream"):
        async with state.upstreams.session.post(url, json=body) as up:
            payload = await up.json(content_type=None)
            if up.status == 200 and isinstance(payload.get("usage"), dict):
                usage = payload["usage"]
                state.ledger.router.add(tally_key, usage["prompt_tokens"], usage["completion_tokens"],
                                        price_in, price_out)
            return web.json_response(payload, status=up.status)

    wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}

    def on_event(event: bytes) -> bytes | None:
        if b'"usage"' not in event or not event.startswith(b"data: {"):
            return event
        chunk = json.loads(event[len(b"data: "):])
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            state.ledger.router.add(tally_key, usage["prompt_tokens"], usage["completion_tokens"],
                                    price_in, price_out)
            if not wants_usage and not chunk.get("choices"):
                return None
        return event

    return await state.upstreams.relay(request, url, body=json.dumps(body).encode(), on_event=on_event)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/router/v1/models", list_models)
    app.router.add_get("/router/v1/models/{model:.+}", get_model)
    app.router.add_post("/router/v1/chat/completions", chat_completions)
