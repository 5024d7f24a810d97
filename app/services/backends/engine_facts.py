"""What an engine says of its models beyond its model list, kept in each entry's details so the
listings tell the truth through every hop (peers get them with the inventory):

- ``show``: an Ollama engine's own /api/show answer (capabilities, model_info with the context
  length, template, parameters, details), fetched once per model and digest; its license and
  modelfile (which repeats the license) are left out, being long and of no use to a client's choice.
- ``capabilities``: what an OpenAI-API engine says its model does: llama.cpp's /props
  (``chat_template_caps.supports_tools`` -> tools, ``modalities.vision`` -> vision).
- ``embeds``: whether an OpenAI-API engine embeds with the model (one one-word /v1/embeddings
  probe per model, when it is first listed), so a peer's /api/show says ``embedding`` as the owning
  node's does: the peer never probes another node's engine itself.
- ``loaded``: whether the engine holds the model loaded now: an Ollama engine's /api/ps row
  (``expires_at``, ``size_vram``); a model an OpenAI-API server lists is one it serves, loaded.
"""

from __future__ import annotations

import asyncio

import httpx

from app.services.backends.base import ModelEntry
from app.services.json_types import JsonArray, JsonObject
from app.services.translate.shapes import Api

Shows = dict[tuple[str, str], JsonObject]


async def _json(client: httpx.AsyncClient, method: str, url: str, headers: dict[str, str],
                body: JsonObject | None = None) -> JsonObject | None:
    try:
        response = await client.request(method, url, headers=headers, json=body, timeout=10.0)
        answer = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def trimmed_show(answer: JsonObject) -> JsonObject:
    return {k: v for k, v in answer.items() if k not in ("license", "modelfile", "tensors")}


def props_capabilities(props: JsonObject) -> JsonArray:
    caps: JsonArray = ["completion"]
    template_caps = props.get("chat_template_caps") or {}
    if isinstance(template_caps, dict) and template_caps.get("supports_tools"):
        caps.append("tools")
    modalities = props.get("modalities") or {}
    if isinstance(modalities, dict) and modalities.get("vision"):
        caps.append("vision")
    return caps


PROBE_HEADER = "X-Pairwise-Probe"


async def answers_embeddings(client: httpx.AsyncClient, url: str, headers: dict[str, str], model: str) -> bool | None:
    """Whether an OpenAI-API engine embeds with this model; None when it could not be asked."""
    try:
        # The header tells a test engine this is the node's own look, not a caller's work; engines ignore it.
        response = await client.post(url + "/v1/embeddings", headers={**headers, PROBE_HEADER: "embeddings"},
                                     json={"model": model, "input": "probe"}, timeout=10.0)
    except httpx.HTTPError:
        return None
    return response.status_code == 200


async def learn_embeddings(client: httpx.AsyncClient, url: str, headers: dict[str, str], models: list[ModelEntry],
                           known: dict[str, bool]) -> None:
    """``embeds`` into each model's details, asking the engine only of models it has not answered for."""
    unseen = [e.name for e in models if e.name not in known]
    answers = await asyncio.gather(*(answers_embeddings(client, url, headers, name) for name in unseen))
    known.update({name: said for name, said in zip(unseen, answers, strict=True) if said is not None})
    for entry in models:
        if known.get(entry.name):
            entry.details["embeds"] = True


async def add_engine_facts(client: httpx.AsyncClient, url: str, headers: dict[str, str], api: Api,
                           models: list[ModelEntry], shows: Shows, embeds: dict[str, bool]) -> None:
    if api == "ollama":
        ps = await _json(client, "GET", url + "/api/ps", headers)
        listed = (ps or {}).get("models")
        loaded = {row.get("name") or row.get("model"): row for row in (listed if isinstance(listed, list) else [])
                  if isinstance(row, dict)}
        for entry in models:
            key = (entry.name, str(entry.details.get("digest") or ""))
            if key not in shows:
                answer = await _json(client, "POST", url + "/api/show", headers, {"model": entry.name})
                if answer is not None:
                    shows[key] = trimmed_show(answer)
            if key in shows:
                entry.details["show"] = shows[key]
            row = loaded.get(entry.name)
            if row is not None:
                entry.details["loaded"] = {"expires_at": row.get("expires_at"), "size_vram": row.get("size_vram", 0)}
        return
    props = await _json(client, "GET", url + "/props", headers)
    await learn_embeddings(client, url, headers, models, embeds)
    for entry in models:
        entry.details["loaded"] = {"expires_at": None, "size_vram": 0}
        if props is not None:
            entry.details["capabilities"] = props_capabilities(props)
