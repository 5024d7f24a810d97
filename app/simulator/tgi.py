"""Text Generation Inference, HF's default engine, as an endpoint's replica shows it.

An endpoint created with HF's default image (``{"huggingface": {}}``) or the ``tgi`` one runs TGI:
its ``/v1/models`` says nothing of the context window, and ``GET /info`` says it
(``max_input_tokens``, ``max_total_tokens``). Both are built from the tiny replica's own model
list, so the window is the replica's (its ``max_model_len``), told the way TGI tells it.
Other engines (vLLM, llama.cpp, sGLang) are the replica as it is.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from app.simulator.endpoints_model import Endpoint
from app.simulator.upstream import Upstreams

TGI_IMAGES = ("huggingface", "tgi")
TGI_VERSION = "3.1.1"
TGI_ROUTES = ("/info", "/v1/models")


# Where each engine image's config takes the window it is started with (HF's endpoint page sets them).
WINDOW_FIELDS = ("maxTotalTokens", "ctxSize", "maxModelLen", "contextLength")


STYLES = {"vLLM": "vllm", "huggingface": "tgi", "tgi": "tgi"}  # whose words a too-long prompt is refused in


def image_window(ep: Endpoint) -> tuple[int | None, str]:
    """The window the endpoint's engine was configured with, if any (its replica serves and enforces it),
    and the engine's words for a prompt longer than it."""
    image = (ep.config.get("model") or {}).get("image") or {}
    style = next((STYLES[key] for key in image if key in STYLES), "llamacpp")
    for config in image.values():
        for key in WINDOW_FIELDS:
            if isinstance(config, dict) and isinstance(config.get(key), int):
                return int(config[key]), style
    return None, style


def runs_tgi(ep: Endpoint) -> bool:
    image = (ep.config.get("model") or {}).get("image") or {}
    return not image or any(key in TGI_IMAGES for key in image)


async def answer(upstreams: Upstreams, ep: Endpoint, replica_url: str, route: str) -> web.Response:
    """``/info`` or ``/v1/models`` as TGI answers them, for the model the replica serves."""
    async with upstreams.session.get(replica_url + "/v1/models") as up:
        listed: list[dict[str, Any]] = (await up.json()).get("data") or []
    window = next((m["max_model_len"] for m in listed if isinstance(m.get("max_model_len"), int)), None)
    if route == "/info":
        return web.json_response({
            "model_id": ep.repository, "model_sha": None, "model_pipeline_tag": "text-generation",
            "max_concurrent_requests": 128, "max_best_of": 2, "max_stop_sequences": 4,
            "max_input_tokens": None if window is None else window - 1, "max_total_tokens": window,
            "validation_workers": 2, "max_client_batch_size": 4, "router": "text-generation-router",
            "version": TGI_VERSION, "sha": None, "docker_label": None})
    return web.json_response({"object": "list", "data": [
        {"id": m["id"], "object": "model", "created": m.get("created", 0), "owned_by": m["id"]} for m in listed]})
