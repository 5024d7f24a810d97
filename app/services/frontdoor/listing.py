"""Model rows for the listings, honest about what is known: what an engine says of its model
is passed on; what it does not say is stable (never made up per call), and distinct per model."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from app.services.json_types import JsonArray, JsonObject
from app.services.translate.candidates import context_length_of
from app.services.translate.shapes import canonical_model

# The Ollama API version whose shapes the front door follows (logprobs, thinking, tool calls).
OLLAMA_API_VERSION = "0.12.11"


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def digest_of(name: str, details: JsonObject) -> str:
    """The engine's digest, else a hash of the model's identity: stable, and distinct per model
    (clients group models by digest)."""
    given = details.get("digest")
    if isinstance(given, str) and given:
        return given
    return hashlib.sha256(f"pairwise-model:{canonical_model(name)}".encode()).hexdigest()


def created_of(details: JsonObject) -> int:
    """The engine's ``created``, else the model file's time, else 0 (stable, not the time of the call)."""
    created = details.get("created")
    if isinstance(created, int) and created > 0:
        return created
    modified = details.get("modified_at")
    if isinstance(modified, str):
        try:
            return int(datetime.fromisoformat(modified.replace("Z", "+00:00")).timestamp())
        except ValueError:
            pass
    return 0


def ollama_row(name: str, details: JsonObject) -> JsonObject:
    return {
        "name": name,
        "model": name,
        "modified_at": details.get("modified_at") or iso(created_of(details)),
        "size": details.get("size") or 0,
        "digest": digest_of(name, details),
        "details": model_details(details),
    }


def model_details(details: JsonObject) -> JsonObject:
    """The row's ``details``: what the engine said of its model's format and family."""
    raw = details.get("details")
    inner: JsonObject = raw if isinstance(raw, dict) else {}
    return {
        "parent_model": inner.get("parent_model", ""),
        "format": inner.get("format", ""),
        "family": inner.get("family", ""),
        "families": inner.get("families") or [],
        "parameter_size": inner.get("parameter_size", ""),
        "quantization_level": inner.get("quantization_level", ""),
    }


def engine_show(details: JsonObject) -> JsonObject | None:
    """The engine's own /api/show answer as the owning node got it (a peer passes it on), if any."""
    show = details.get("show")
    return show if isinstance(show, dict) and show else None


def loaded_row(name: str, details: JsonObject) -> JsonObject | None:
    """An /api/ps row when the engine that serves the model says it holds it loaded."""
    loaded = details.get("loaded")
    if not isinstance(loaded, dict):
        return None
    row = ollama_row(name, details)
    row.update({"expires_at": loaded.get("expires_at") or "0001-01-01T00:00:00Z",
                "size_vram": loaded.get("size_vram") or 0})
    return row


def openai_row(model_id: str, details: JsonObject) -> JsonObject:
    return {"id": model_id, "object": "model", "created": created_of(details),
            "owned_by": details.get("owned_by") or "pairwise"}


def looks_like_embedding(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in ("embed", "bge-", "e5-", "minilm", "gte-", "nomic-bert"))


def synthesized_show(name: str, details: JsonObject, embedding: bool) -> JsonObject:
    """/api/show for a model of an engine that has no /api/show: what is known of it, nothing more."""
    row = ollama_row(name, details)
    said_details = model_details(details)
    family = said_details["family"]
    model_info: JsonObject = {"general.architecture": family} if family else {}
    context = context_length_of(details)
    if context is not None:
        model_info[f"{family or 'general'}.context_length"] = context
    # What the engine says its model does (llama.cpp's /props), else: an embedding model by its name
    # does nothing else; another model that also embeds does both.
    capabilities: JsonArray = (list(said) if (said := details.get("capabilities")) and isinstance(said, list) else
                               [] if looks_like_embedding(name) else ["completion"])
    capabilities += ["embedding"] if embedding else []
    return {
        "modelfile": "", "parameters": "", "template": "",
        "details": said_details, "model_info": model_info,
        "capabilities": capabilities,
        "modified_at": row["modified_at"],
    }
