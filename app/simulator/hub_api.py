"""Hub routes: whoami-v2, the auth-check routes, and the Inference Catalog (legacy and v1).

The catalog is served twice: the legacy shape huggingface_hub ≤1.28 used (/api/catalog/repo-list,
/api/catalog/deploy) and the v1 shape of current clients (/api/v1/catalog/list,
/model/{repo}/deploy, /recipe/{id}/deploy). Deploy picks the model's recipe (first, or the one for
the requested accelerator/GGUF file) and creates an endpoint with the tested config: vLLM/SGLang
on aws us-east-1 nvidia-l4 x1, llama.cpp/TEI on intel-spr x1, minReplica 0, scaleToZeroTimeout 15.
"""

from __future__ import annotations

import re
import secrets
import string
from typing import Any

from aiohttp import web

from app.simulator import fixtures
from app.simulator.endpoints_api import ApiError, create
from app.simulator.httputil import BadBody, bearer, hex_id, hf_error, plain_400, read_body, unauthorized
from app.simulator.state import SimState, sim
from app.simulator.tokens import ENDPOINTS_INFER, ENDPOINTS_WRITE, JOBS, TokenInfo, check, whoami

_IMAGES: dict[str, tuple[str, dict[str, Any]]] = {
    "vllm": ("vLLM", {"url": "vllm/vllm-openai:v0.11.0", "port": 8000, "healthRoute": "/health"}),
    "sglang": ("sGLang", {"url": "lmsysorg/sglang:v0.5.3", "port": 30000, "healthRoute": "/health"}),
    "llamacpp": ("llamacpp", {"url": "ghcr.io/ggml-org/llama.cpp:server", "port": 8080, "healthRoute": "/health"}),
    "tei": ("tei", {"url": "ghcr.io/huggingface/text-embeddings-inference:cpu-1.8", "port": 80,
                    "healthRoute": "/health"}),
}
_COMPUTE = {"gpu": ("gpu", "nvidia-l4", "x1"), "cpu": ("cpu", "intel-spr", "x1")}


async def whoami_v2(request: web.Request) -> web.StreamResponse:
    info = sim(request).tokens.get(bearer(request))
    if info is None:
        return unauthorized()
    return web.json_response(whoami(info))


def _auth_check(request: web.Request, write_perm: str) -> web.StreamResponse:
    state, namespace, perms = sim(request), request.match_info["namespace"], request.match_info["perms"]
    needed = {"read": None, "write": write_perm, "infer": ENDPOINTS_INFER}.get(perms, "?")
    if needed == "?":
        return hf_error(400, f"Invalid permission {perms}: expected read, write or infer")
    info = state.tokens.get(bearer(request))
    if info is None:
        return unauthorized()
    if needed is None:
        if namespace not in info.namespaces():
            return hf_error(403, f"You don't have access to namespace {namespace}")
    else:
        result = check(request, state.tokens, namespace, needed)
        if isinstance(result, web.Response):
            return result
    kind = "user" if namespace == info.user else "org"
    return web.json_response({"namespace": {"id": hex_id(f"{kind}:{namespace}"), "name": namespace},
                              "user": {"id": hex_id(f"user:{info.user}"), "name": info.user,
                                       "hasHfLevelAccess": False}})


async def endpoints_auth_check(request: web.Request) -> web.StreamResponse:
    return _auth_check(request, ENDPOINTS_WRITE)


async def jobs_auth_check(request: web.Request) -> web.StreamResponse:
    return _auth_check(request, JOBS)


# --- catalog ---------------------------------------------------------------------------------------
def _item(repo: str) -> dict[str, Any] | None:
    return next((i for i in fixtures.catalog_items() if i["repoId"] == repo), None)


def _default_name(repo: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", repo.split("/")[-1].lower()).strip("-")[:26].strip("-")
    suffix = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(5))
    return f"{slug}-{suffix}"


async def _deploy(request: web.Request, body: dict[str, Any], item: dict[str, Any], recipe: dict[str, Any],
                  name: str | None) -> web.StreamResponse:
    state: SimState = sim(request)
    namespace = body.get("namespace")
    if not isinstance(namespace, str) or not namespace:
        return hf_error(400, "namespace is required")
    result = check(request, state.tokens, namespace, ENDPOINTS_WRITE)
    if isinstance(result, web.Response):
        return result
    token: TokenInfo = result
    image_key, image = _IMAGES[recipe["engineType"]]
    accelerator, itype, isize = _COMPUTE.get(recipe["accelerator"], _COMPUTE["gpu"])
    if recipe.get("ggufFile"):
        image = {**image, "modelPath": f"/repository/{recipe['ggufFile']}"}
    create_body = {
        "name": name or _default_name(item["repoId"]), "type": "authenticated",
        "compute": {"accelerator": accelerator, "instanceType": itype, "instanceSize": isize,
                    "scaling": {"minReplica": 0, "maxReplica": 1, "scaleToZeroTimeout": 15}},
        "model": {"repository": item["repoId"], "framework": "pytorch", "task": item["task"],
                  "image": {image_key: image}},
        "provider": {"vendor": "aws", "region": "us-east-1"},
    }
    try:
        ep = create(state, namespace, create_body, token.user)
    except ApiError as exc:
        return exc.response
    return web.json_response({"endpoint": state.endpoints.to_json(ep)})


def _pick_recipe(item: dict[str, Any], accelerator: Any, gguf: Any) -> dict[str, Any] | None:
    for recipe in item["recipes"]:
        if accelerator not in (None, recipe["accelerator"]) or gguf not in (None, recipe.get("ggufFile")):
            continue
        return recipe  # type: ignore[no-any-return]
    return None


async def _body(request: web.Request) -> dict[str, Any] | web.Response:
    try:
        return await read_body(request)
    except BadBody as exc:
        return plain_400(str(exc))


async def legacy_repo_list(request: web.Request) -> web.StreamResponse:
    return web.json_response({"models": [i["repoId"] for i in fixtures.catalog_items()]})


async def legacy_deploy(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    item = _item(str(body.get("repoId")))
    if item is None:
        return hf_error(404, f"Model {body.get('repoId')} not found in the catalog")
    recipe = _pick_recipe(item, body.get("accelerator"), None)
    if recipe is None:
        return hf_error(400, f"No tested configuration of {item['repoId']} for {body.get('accelerator')}")
    return await _deploy(request, body, item, recipe, body.get("endpointName"))


async def v1_list(request: web.Request) -> web.StreamResponse:
    q = request.query
    items = []
    for item in fixtures.catalog_items():
        recipes = [r for r in item["recipes"] if q.get("accelerator") in (None, r["accelerator"])
                   and q.get("engine") in (None, r["engineType"])]
        if not recipes or q.get("license") not in (None, item["license"]) or q.get("task") not in (None, item["task"]):
            continue
        if q.get("search") and q["search"].lower() not in item["repoId"].lower():
            continue
        items.append(item)
    if q.get("limit", "").isdigit():
        items = items[: int(q["limit"])]
    return web.json_response({"items": items})


async def v1_deploy_model(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    item = _item(request.match_info["repo"])
    if item is None:
        return hf_error(404, f"Model {request.match_info['repo']} not found in the catalog")
    recipe = _pick_recipe(item, body.get("accelerator"), body.get("ggufFile"))
    if recipe is None:
        return hf_error(400, f"No recipe of {item['repoId']} matches the requested accelerator or GGUF file")
    return await _deploy(request, body, item, recipe, (body.get("config") or {}).get("name"))


async def v1_deploy_recipe(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    for item in fixtures.catalog_items():
        for recipe in item["recipes"]:
            if recipe["publicId"] == request.match_info["recipe"]:
                return await _deploy(request, body, item, recipe, (body.get("config") or {}).get("name"))
    return hf_error(404, f"Recipe {request.match_info['recipe']} not found")


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/whoami-v2", whoami_v2)
    app.router.add_post("/api/inference-endpoints/{namespace}/auth-check/{perms}", endpoints_auth_check)
    app.router.add_post("/api/jobs/{namespace}/auth-check/{perms}", jobs_auth_check)
    app.router.add_get("/api/catalog/repo-list", legacy_repo_list)
    app.router.add_post("/api/catalog/deploy", legacy_deploy)
    app.router.add_get("/api/v1/catalog/list", v1_list)
    app.router.add_post("/api/v1/catalog/model/{repo:.+}/deploy", v1_deploy_model)
    app.router.add_post("/api/v1/catalog/recipe/{recipe}/deploy", v1_deploy_recipe)
