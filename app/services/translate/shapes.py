"""The operations Pairwise serves and where each lives in each API."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Literal

from app.services.json_types import JsonObject

Api = Literal["ollama", "openai"]
Operation = Literal["chat", "complete", "embed", "embed_legacy"]

PATHS: dict[Api, dict[Operation, str]] = {
    "ollama": {
        "chat": "/api/chat",
        "complete": "/api/generate",
        "embed": "/api/embed",
        "embed_legacy": "/api/embeddings",
    },
    "openai": {
        "chat": "/v1/chat/completions",
        "complete": "/v1/completions",
        "embed": "/v1/embeddings",
        "embed_legacy": "/v1/embeddings",
    },
}


def wants_stream(api: Api, operation: Operation, body: Mapping[str, object]) -> bool:
    if operation in ("embed", "embed_legacy"):
        return False
    # Ollama streams unless told not to; OpenAI only when asked.
    if api == "ollama":
        return body.get("stream", True) is not False
    return body.get("stream") is True


def canonical_model(name: str) -> str:
    """An untagged name means ``:latest`` (Ollama's rule), so ``llama3`` == ``llama3:latest``."""
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


def error_body(api: Api, message: str, *, status: int, kind: str = "invalid_request_error",
               param: str | None = None) -> JsonObject:
    """An error as each API writes it; ``param`` names the request field at fault (OpenAI's shape has a place for it)."""
    if api == "ollama":
        return {"error": message}
    code = {404: "model_not_found", 413: "request_too_large", 403: "forbidden"}.get(status)
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_param(raw: bytes) -> str | None:
    """The request field an upstream's OpenAI-shaped error names, so a relayed refusal keeps it."""
    try:
        error = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        return None
    param = error.get("param") if isinstance(error, dict) else None
    return param if isinstance(param, str) else None
