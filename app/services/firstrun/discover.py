"""Engines found on loopback, not typed: one short probe per usual port, all at once, once.

Each port is asked as Ollama first (``/api/version`` then ``/api/tags``), then as an
OpenAI-compatible server (``/v1/models``). A port where nothing listens refuses at once on
loopback; one that accepts and says nothing is given up after ``deadline_s``. Nothing here
retries: a caller that wants to look again asks again (a button, a command).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from app.services.firstrun.holder import PAIRWISE_HEADER

Api = Literal["ollama", "openai"]
REQUEST_TIMEOUT_S = 0.4
DEADLINE_S = 0.9  # per port, all ports in parallel: the whole look takes under a second
HOST = "127.0.0.1"


@dataclass(frozen=True)
class KnownPort:
    port: int
    product: str
    name: str


# The ports people's engines listen on by default, and the one Pairwise asks Ollama to move to.
KNOWN_PORTS: tuple[KnownPort, ...] = (
    KnownPort(11434, "Ollama", "ollama"),
    KnownPort(11435, "Ollama", "ollama"),
    KnownPort(1234, "LM Studio", "lm-studio"),
    KnownPort(8080, "llama.cpp server or LocalAI", "llama-cpp"),
    KnownPort(8000, "vLLM", "vllm"),
    KnownPort(1337, "Jan", "jan"),
    KnownPort(5000, "text-generation-webui", "text-generation-webui"),
)


@dataclass
class FoundEngine:
    url: str
    api: Api
    models: list[str]
    product: str
    name: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "api": self.api, "models": self.models, "product": self.product, "name": self.name}

    def declaration(self, name: str | None = None) -> dict[str, Any]:
        """What ``engines add`` takes for this engine."""
        return {"name": name or self.name, "url": self.url, "api": self.api}


def default_ports() -> list[int]:
    return [known.port for known in KNOWN_PORTS]


async def discover(ports: Sequence[int] | None = None, *, host: str = HOST, deadline_s: float = DEADLINE_S,
                   skip_urls: Iterable[str] = ()) -> list[FoundEngine]:
    """What answers on ``ports`` (default: the usual ones), in port order. Pairwise front doors are left out."""
    wanted = list(dict.fromkeys(ports if ports is not None else default_ports()))
    skip = {url.rstrip("/") for url in skip_urls}
    limits = httpx.Limits(max_connections=len(wanted) * 2 or 1)
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, trust_env=False, limits=limits) as client:
        results = await asyncio.gather(*(_probe_with_deadline(client, host, port, deadline_s) for port in wanted))
    return [found for found in results if found is not None and found.url not in skip]


async def _probe_with_deadline(client: httpx.AsyncClient, host: str, port: int, deadline_s: float) -> FoundEngine | None:
    try:
        return await asyncio.wait_for(_probe(client, host, port), timeout=deadline_s)
    except TimeoutError:
        return None


async def _probe(client: httpx.AsyncClient, host: str, port: int) -> FoundEngine | None:
    base = f"http://{host}:{port}"
    known = next((k for k in KNOWN_PORTS if k.port == port), None)
    version = await _get(client, f"{base}/api/version")
    if version is None:
        return None  # nothing listens, or it does not speak HTTP
    if PAIRWISE_HEADER in version.headers:
        return None  # a Pairwise front door (this node or another): not an engine
    if version.status_code == 200 and isinstance(_json(version), dict) and "version" in _json(version):
        tags = await _get(client, f"{base}/api/tags")
        body = _json(tags) if tags is not None and tags.status_code == 200 else None
        models = [str(m.get("name") or m.get("model")) for m in (body or {}).get("models") or []
                  if isinstance(m, dict)] if isinstance(body, dict) else []
        return FoundEngine(base, "ollama", models, "Ollama", "ollama",
                           extra={"version": _json(version)["version"]})
    listing = await _get(client, f"{base}/v1/models")
    body = _json(listing) if listing is not None and listing.status_code == 200 else None
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None
    models = [str(m["id"]) for m in body["data"] if isinstance(m, dict) and "id" in m]
    product = known.product if known and known.name != "ollama" else "an OpenAI-compatible server"
    name = known.name if known and known.name != "ollama" else f"openai-{port}"
    return FoundEngine(base, "openai", models, product, name)


async def _get(client: httpx.AsyncClient, url: str) -> httpx.Response | None:
    try:
        return await client.get(url)
    except (httpx.HTTPError, OSError):
        return None


def _json(response: httpx.Response | None) -> Any:
    if response is None:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def describe(found: Sequence[FoundEngine]) -> str:
    """Lines for a terminal: what was found and its models."""
    if not found:
        return "No engine answered on loopback."
    lines = []
    for engine in found:
        models = ", ".join(engine.models) or "no models yet"
        lines.append(f"{engine.product} at {engine.url} ({engine.api} API): {models}")
    return "\n".join(lines)
