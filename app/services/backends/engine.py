"""A local engine (Ollama, llama.cpp, vLLM...) adopted by base URL."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx

from app.environment import environment
from app.services.backends.base import ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.backends.engine_facts import Shows, add_engine_facts
from app.services.backends.http_open import error_text
from app.services.backends.splice_client import SpliceClient
from app.services.backends.stream_client import StreamClient
from app.services.backends.tokenize import Tokenizer
from app.services.backends.windows import (
    context_length_of,
    llama_props_window,
    ollama_show_window,
    positive_int,
)
from app.services.errors import UpstreamError
from app.services.json_types import JsonObject
from app.services.outbound import make_client, outbound_ssl_context
from app.services.translate.shapes import PATHS, Api
from app.services.upstream_facts import EngineFacts
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
        self.declared_window = decl.context_window
        self.first_byte_timeout_s = decl.first_byte_timeout_s
        self.idle_timeout_s = decl.idle_timeout_s
        self.in_flight = 0
        self._headers = {"authorization": f"Bearer {token}"} if token else {}
        self._client = make_client(extra_ca=extra_ca, read_timeout_s=10.0)  # model lists
        self._streams = StreamClient(outbound_ssl_context(extra_ca))  # inference (the data plane)
        # Pass-through streams (same API both sides) on the splice's own connections; off: aiohttp's.
        self._splice = None if environment().splice_off else SpliceClient(outbound_ssl_context(extra_ca))
        self._models: list[ModelEntry] = []
        self._shows: Shows = {}  # an Ollama engine's /api/show answers, by model and digest
        self._embeds: dict[str, bool] = {}  # whether an OpenAI-API engine embeds with each model
        self.models_fetched_at = 0.0
        self.last_error: str | None = None
        # What /api/show said of each model (it does not change while the name stays): (num_ctx, trained).
        self._shown: dict[str, tuple[int | None, int | None]] = {}
        self._has_props: bool | None = None  # llama.cpp's /props: None until asked once
        self._tokenizer = Tokenizer(self._client, decl.url, self._headers)

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
            if not isinstance(data, dict):
                raise UpstreamError(f"engine {self.name} answered a model list that is not a JSON object")
        except (httpx.HTTPError, ValueError, UpstreamError) as exc:
            self.last_error = str(exc) if isinstance(exc, UpstreamError) else f"engine {self.name} unreachable: {exc}"
            self.models_fetched_at = time.monotonic()
            log.info("model list of %s not refreshed: %s", self.name, self.last_error)
            return
        self.last_error = None
        models = parse_model_list(self.decl.api, data)
        await self._learn_windows(models)
        await add_engine_facts(self._client, self.decl.url, self._headers, self.decl.api, models, self._shows,
                               self._embeds)
        self._models = models
        self.models_fetched_at = time.monotonic()

    async def _learn_windows(self, models: list[ModelEntry]) -> None:
        """Each model's window into its details (``windows.py`` says where each engine kind tells it).
        Any failure leaves the window unknown: the model list is what matters."""
        if self.decl.api == "ollama":
            loaded = await self._get_json("/api/ps")
            listed = (loaded or {}).get("models")
            running = {str(m.get("name") or m.get("model")): positive_int(m.get("context_length"))
                       for m in (listed if isinstance(listed, list) else []) if isinstance(m, dict)}
            unseen = [e.name for e in models if e.name not in self._shown]
            for name, shown in zip(unseen, await asyncio.gather(*(self.show(n) for n in unseen)), strict=True):
                self._shown[name] = ollama_show_window(shown) if shown else (None, None)
            for entry in models:
                num_ctx, trained = self._shown[entry.name]
                window = running.get(entry.name) or num_ctx or trained
                if window:
                    entry.details["context_length"] = window
                if trained:
                    entry.details["trained_context_length"] = trained
            return
        if any(context_length_of(e.details) is not None for e in models) or self._has_props is False:
            return
        window = llama_props_window(await self._get_json("/props"))
        self._has_props = window is not None
        for entry in models if window else []:
            entry.details["context_length"] = window

    async def _get_json(self, path: str) -> JsonObject | None:
        try:
            response = await self._client.get(self.decl.url + path, headers=self._headers, timeout=5.0)
            answer = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        return answer if isinstance(answer, dict) else None

    async def show(self, model: str) -> JsonObject | None:
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

    async def count_tokens(self, model: str, text: str) -> int | None:
        """llama.cpp's, vLLM's or llama-cpp-python's tokenizer endpoint (Ollama has none)."""
        return None if self.decl.api == "ollama" else await self._tokenizer.count(model, text)

    async def open(self, request: UpstreamRequest) -> Opened:
        url = self.decl.url + PATHS[self.decl.api][request.operation]
        spliced = self._splice is not None and request.stream and request.api == request.client_api
        client = self._splice if spliced and self._splice is not None else self._streams
        opened = await client.open(
            url, json_body=request.body, headers=self._headers, first_byte_timeout_s=self.first_byte_timeout_s,
            idle_timeout_s=self.idle_timeout_s, label=f"engine {self.name}",
        )
        opened.serving_node, opened.serving_node_id, opened.engine = self.node_name, self.node_id, self.name
        return opened

    def describe(self) -> EngineFacts:
        return {
            "key": self.key, "kind": self.kind, "node": self.node_name,
            "name": self.name, "url": self.decl.url, "api": self.decl.api, "capacity": self.capacity,
            "first_byte_timeout_s": self.first_byte_timeout_s, "idle_timeout_s": self.idle_timeout_s,
            "in_flight": self.in_flight,
            "models": [m.name for m in self._models], "error": self.last_error,
            "windows": {m.name: self.window(m.canonical) for m in self._models},
            "context_window": self.decl.context_window,
            "has_credential": self.decl.has_credential,
        }

    async def aclose(self) -> None:
        await self._client.aclose()
        await self._streams.aclose()
        if self._splice is not None:
            await self._splice.aclose()


def parse_model_list(api: Api, data: JsonObject) -> list[ModelEntry]:
    """The models of an engine's list; an entry that is no object, or has no name, is none."""
    entries: list[ModelEntry] = []
    listed = data.get("models" if api == "ollama" else "data") or []
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, dict):
            continue
        if api == "ollama":
            name = item.get("name") or item.get("model")
            if isinstance(name, str) and name:
                entries.append(ModelEntry(name, {k: v for k, v in item.items() if k not in ("name", "model")}))
        else:
            model_id = item.get("id")
            if isinstance(model_id, str) and model_id:
                # Everything the engine says of its model (llama.cpp's meta, vLLM's max_model_len...).
                entries.append(ModelEntry(model_id, {k: v for k, v in item.items() if k != "id"}))
    return entries
