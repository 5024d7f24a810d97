"""A local engine (Ollama, llama.cpp, vLLM...) adopted by base URL."""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx

from app.services.backends.base import ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.backends.engine_facts import Shows, add_engine_facts
from app.services.backends.http_open import error_text
from app.services.backends.stream_client import StreamClient
from app.services.errors import UpstreamError
from app.services.outbound import make_client, outbound_ssl_context
from app.services.translate.shapes import PATHS, Api
from app.settings import EngineDecl

log = logging.getLogger(__name__)

# A model list older than this is refreshed before a request is refused for a missing model.
STALE_AFTER_S = 15.0


class EngineUpstream(Upstream):
    kind = "engine"

    def __init__(self, decl: EngineDecl, *, node_name: str, node_id: str, token: str | None,
                 extra_ca: tuple[str, ...] = ()) -> None:
        self.decl = decl
        self.key = f"engine:{decl.name}"
        self.node_name, self.node_id = node_name, node_id
        self.capacity = decl.capacity
        self.first_byte_timeout_s = decl.first_byte_timeout_s
        self.idle_timeout_s = decl.idle_timeout_s
        self.in_flight = 0
        self._headers = {"authorization": f"Bearer {token}"} if token else {}
        self._client = make_client(extra_ca=extra_ca, read_timeout_s=10.0)  # model lists
        self._streams = StreamClient(outbound_ssl_context(extra_ca))  # inference (the data plane)
        self._models: list[ModelEntry] = []
        self._shows: Shows = {}  # an Ollama engine's /api/show answers, by model and digest
        self.models_fetched_at = 0.0
        self.last_error: str | None = None

    @property
    def name(self) -> str:
        return self.decl.name

    def models(self) -> list[ModelEntry]:
        return self._models

    def api_for(self, client_api: Api) -> Api:
        return self.decl.api

    def is_stale(self) -> bool:
        return time.monotonic() - self.models_fetched_at > STALE_AFTER_S

    async def refresh_models(self) -> None:
        path = "/api/tags" if self.decl.api == "ollama" else "/v1/models"
        try:
            response = await self._client.get(self.decl.url + path, headers=self._headers, timeout=10.0)
            if response.status_code != 200:
                raise UpstreamError(f"engine {self.name} answered {response.status_code}: {error_text(response.content)}")
            data = response.json()
        except (httpx.HTTPError, ValueError, UpstreamError) as exc:
            self.last_error = str(exc) if isinstance(exc, UpstreamError) else f"engine {self.name} unreachable: {exc}"
            self.models_fetched_at = time.monotonic()
            log.info("model list of %s not refreshed: %s", self.name, self.last_error)
            return
        self.last_error = None
        models = parse_model_list(self.decl.api, data)
        await add_engine_facts(self._client, self.decl.url, self._headers, self.decl.api, models, self._shows)
        self._models = models
        self.models_fetched_at = time.monotonic()

    async def show(self, model: str) -> dict[str, Any] | None:
        """An Ollama-API engine's own /api/show answer for a model (None for OpenAI-API engines)."""
        if self.decl.api != "ollama":
            return None
        try:
            response = await self._client.post(self.decl.url + "/api/show", json={"model": model},
                                                     headers=self._headers, timeout=10.0)
            answer = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        return answer if isinstance(answer, dict) else None

    async def answers_embeddings(self, model: str) -> bool:
        """Whether an OpenAI-API engine embeds with this model (a one-word probe, for /api/show)."""
        try:
            response = await self._client.post(self.decl.url + "/v1/embeddings", headers=self._headers,
                                                     json={"model": model, "input": "probe"}, timeout=10.0)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    async def open(self, request: UpstreamRequest) -> Opened:
        url = self.decl.url + PATHS[self.decl.api][request.operation]
        opened = await self._streams.open(
            url, json_body=request.body, headers=self._headers, first_byte_timeout_s=self.first_byte_timeout_s,
            idle_timeout_s=self.idle_timeout_s, label=f"engine {self.name}",
        )
        opened.serving_node, opened.serving_node_id, opened.engine = self.node_name, self.node_id, self.name
        return opened

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name, "url": self.decl.url, "api": self.decl.api, "capacity": self.capacity,
            "first_byte_timeout_s": self.first_byte_timeout_s, "idle_timeout_s": self.idle_timeout_s,
            "in_flight": self.in_flight,
            "models": [m.name for m in self._models], "error": self.last_error,
            "has_credential": self.decl.has_credential,
        }

    async def aclose(self) -> None:
        await self._client.aclose()
        await self._streams.aclose()


def parse_model_list(api: Api, data: Any) -> list[ModelEntry]:
    entries: list[ModelEntry] = []
    if api == "ollama":
        for item in data.get("models") or []:
            name = item.get("name") or item.get("model")
            if name:
                entries.append(ModelEntry(name, {k: v for k, v in item.items() if k not in ("name", "model")}))
    else:
        for item in data.get("data") or []:
            if item.get("id"):
                # Everything the engine says of its model (llama.cpp's meta, vLLM's max_model_len...).
                entries.append(ModelEntry(item["id"], {k: v for k, v in item.items() if k != "id"}))
    return entries
