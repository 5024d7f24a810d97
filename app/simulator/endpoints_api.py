"""The Inference Endpoints management API under /v2 (hf-api.md §1).

Decisions on the documented gaps (§7): create and delete answer 200 (delete with `{}`); a duplicate
name is 409 `{"error": "Endpoint name already exists"}`; errors use `{"error": ...}` except body
problems, which are plain-text 400s like the real serde messages; lists are not paginated.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from app.simulator.endpoints_model import QUOTA_FREE, Endpoint, creator
from app.simulator.httputil import BadBody, hf_error, plain_400, read_body
from app.simulator.state import SimState, sim
from app.simulator.tokens import ENDPOINTS_WRITE, TokenInfo, check

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

TYPES = ("public", "authenticated", "protected", "private")
_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")
_REPLACED_WHOLE = ("image", "env", "secrets", "command", "args")  # not deep-merged on update


class ApiError(Exception):
    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


def _missing(field: str, body: dict[str, Any]) -> ApiError:
    column = len(json.dumps(body))
    return ApiError(plain_400(
        f"Failed to parse the request body as JSON: missing field `{field}` at line 1 column {column}"))


def _require(body: dict[str, Any], path: str) -> Any:
    node: Any = body
    for part in path.split("."):
        if not isinstance(node, dict) or node.get(part) is None:
            raise _missing(path, body)
        node = node[part]
    return node


def _compute_row(state: SimState, provider: dict[str, Any], compute: dict[str, Any]) -> dict[str, Any]:
    vendor, region = provider.get("vendor"), provider.get("region")
    itype, isize, acc = compute.get("instanceType"), compute.get("instanceSize"), compute.get("accelerator")
    row = state.hardware.find(str(vendor), str(region), str(itype), str(isize))
    if row is None or row["accelerator"] != acc:
        raise ApiError(plain_400(f"Instance compute '{str(acc).capitalize()}' - '{itype}' - '{isize}' "
                                 f"in '{vendor}' - '{region}' not found"))
    if row["status"] in ("not_available", "deprecated"):
        raise ApiError(hf_error(400, f"Instance compute '{row['id']}' is {row['status'].replace('_', ' ')}"))
    return row


def _normalise(body: dict[str, Any], state: SimState) -> dict[str, Any]:
    """Validate a create body and return the stored config (unknown keys are accepted and kept)."""
    for path in ("name", "type", "compute.accelerator", "compute.instanceType", "compute.instanceSize",
                 "compute.scaling", "model.repository", "model.framework", "model.image",
                 "provider.vendor", "provider.region"):
        _require(body, path)
    if body["type"] not in TYPES:
        raise ApiError(plain_400(
            f"Failed to parse the request body as JSON: type: unknown variant `{body['type']}`, expected one of "
            + ", ".join(f"`{t}`" for t in TYPES) + " at line 1 column 1"))
    if not isinstance(body["name"], str) or not _NAME.match(body["name"]):
        raise ApiError(hf_error(400, "Endpoint name must be 1-32 lowercase letters, digits or dashes, "
                                     "starting and ending with a letter or digit"))
    _compute_row(state, body["provider"], body["compute"])
    config = {k: copy.deepcopy(v) for k, v in body.items() if k != "name"}
    scaling = config["compute"]["scaling"]
    scaling.setdefault("minReplica", 1)
    scaling.setdefault("maxReplica", 1)
    scaling.setdefault("scaleToZeroTimeout", None)
    measure = scaling.get("measure") or {"hardwareUsage": None}
    scaling["measure"] = measure
    scaling["metric"] = next(iter(measure))
    model = config["model"]
    model.setdefault("revision", None)
    model.setdefault("task", "text-generation")
    model.setdefault("env", {})
    model.setdefault("secrets", {})
    config.setdefault("accountId", None)
    config.setdefault("tags", [])
    config.setdefault("cacheHttpResponses", False)
    return config


def _merge(into: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict) and key not in _REPLACED_WHOLE:
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


async def _auth(request: web.Request) -> tuple[SimState, str, TokenInfo]:
    state, namespace = sim(request), request.match_info["namespace"]
    result = check(request, state.tokens, namespace, ENDPOINTS_WRITE)
    if isinstance(result, web.Response):
        raise ApiError(result)
    return state, namespace, result


def _find(state: SimState, namespace: str, name: str) -> Endpoint:
    ep = state.endpoints.get(namespace, name)
    if ep is None:
        raise ApiError(hf_error(404, f"Endpoint {name} not found in namespace {namespace}"))
    return ep


def _routes_error_guard(handler: Handler) -> Handler:
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except ApiError as exc:
            return exc.response
        except BadBody as exc:
            return plain_400(str(exc))
    return wrapped


async def list_endpoints(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    items = [state.endpoints.to_json(ep) for ep in state.endpoints.in_namespace(namespace)]
    return web.json_response({"items": items})


def create(state: SimState, namespace: str, body: dict[str, Any], user: str) -> Endpoint:
    """Validate and create an endpoint (also used by the catalog's deploy); raises ApiError."""
    config = _normalise(body, state)
    name = body["name"]
    if state.endpoints.get(namespace, name) is not None:
        raise ApiError(hf_error(409, "Endpoint name already exists"))
    probe = Endpoint(namespace, name, "", config, "pending", 0.0, {})
    error = state.endpoints.quota_error(namespace, config["compute"]["instanceType"],
                                        state.endpoints.accelerators(probe), None)
    if error:
        raise ApiError(hf_error(400, error))
    return state.endpoints.add(namespace, name, config, creator(user))


async def create_endpoint(request: web.Request) -> web.StreamResponse:
    state, namespace, token = await _auth(request)
    ep = create(state, namespace, await read_body(request), token.user)
    return web.json_response(state.endpoints.to_json(ep))


async def get_endpoint(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    ep = _find(state, namespace, request.match_info["name"])
    return web.json_response(state.endpoints.to_json(ep))


async def update_endpoint(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    ep = _find(state, namespace, request.match_info["name"])
    patch = await read_body(request)
    patch.pop("name", None)
    if "type" in patch and patch["type"] not in TYPES:
        return plain_400(f"Failed to parse the request body as JSON: type: unknown variant `{patch['type']}`")
    candidate = copy.deepcopy(ep.config)
    _merge(candidate, patch)
    _compute_row(state, candidate["provider"], candidate["compute"])
    if "compute" in patch and ep.state not in QUOTA_FREE:
        probe = Endpoint(namespace, ep.name, "", candidate, ep.state, 0.0, {})
        error = state.endpoints.quota_error(namespace, candidate["compute"]["instanceType"],
                                            state.endpoints.accelerators(probe), ep)
        if error:
            return hf_error(400, error)
    ep.config = candidate
    if ep.tiny is not None:
        ep.tiny.opts.models = [ep.repository]
    if ep.state in ("running", "updating"):
        state.endpoints.set_state(ep, "updating")
    elif ep.state in ("failed", "updateFailed"):
        state.endpoints.set_state(ep, "pending")
    return web.json_response(state.endpoints.to_json(ep))


async def delete_endpoint(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    ep = _find(state, namespace, request.match_info["name"])
    state.endpoints.remove(ep)
    await state.upstreams.close_tiny(ep.tiny)
    return web.json_response({})


async def pause_endpoint(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    ep = _find(state, namespace, request.match_info["name"])
    if ep.state != "paused":
        state.endpoints.set_state(ep, "paused")
    return web.json_response(state.endpoints.to_json(ep))


async def resume_endpoint(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    ep = _find(state, namespace, request.match_info["name"])
    error = state.endpoints.resume(ep)
    if error:
        return hf_error(400, error)
    return web.json_response(state.endpoints.to_json(ep))


async def scale_to_zero(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    ep = _find(state, namespace, request.match_info["name"])
    if ep.state in ("paused", "failed"):
        return hf_error(400, f"Endpoint {ep.name} is {ep.state}: it cannot be scaled to zero")
    if ep.state != "scaledToZero":
        state.endpoints.set_state(ep, "scaledToZero")
    return web.json_response(state.endpoints.to_json(ep))


async def provider(request: web.Request) -> web.StreamResponse:
    state, namespace, _ = await _auth(request)
    return web.json_response(state.hardware.provider_json(
        lambda itype: state.endpoints.used_accelerators(namespace, itype)))


async def public_vendors(request: web.Request) -> web.StreamResponse:
    vendors = sim(request).hardware.provider_json(lambda _itype: 0)["vendors"]
    return web.json_response({"vendors": [{"name": v["name"], "status": v["status"],
                                           "regions": [{"name": r["name"], "label": r["label"], "status": r["status"]}
                                                       for r in v["regions"]]} for v in vendors]})


def add_routes(app: web.Application) -> None:
    g = _routes_error_guard
    app.router.add_get("/v2/endpoint/{namespace}", g(list_endpoints))
    app.router.add_post("/v2/endpoint/{namespace}", g(create_endpoint))
    app.router.add_get("/v2/endpoint/{namespace}/{name}", g(get_endpoint))
    app.router.add_put("/v2/endpoint/{namespace}/{name}", g(update_endpoint))
    app.router.add_delete("/v2/endpoint/{namespace}/{name}", g(delete_endpoint))
    app.router.add_post("/v2/endpoint/{namespace}/{name}/pause", g(pause_endpoint))
    app.router.add_post("/v2/endpoint/{namespace}/{name}/resume", g(resume_endpoint))
    app.router.add_post("/v2/endpoint/{namespace}/{name}/scale-to-zero", g(scale_to_zero))
    app.router.add_get("/v2/provider", public_vendors)
    app.router.add_get("/v2/provider/{namespace}", g(provider))
