"""Request bodies for the serving engine's API: passed as is within one API, translated across.

Across APIs every field is translated, dropped as a hint, or refused by name (Untranslatable);
see to_openai.py, to_ollama.py and the table in fields.py."""

from __future__ import annotations

from typing import Any

from app.services.translate.shapes import Api, Operation, wants_stream
from app.services.translate.to_ollama import openai_to_ollama
from app.services.translate.to_openai import ollama_to_openai


def translate_request(source: Api, target: Api, operation: Operation, body: dict[str, Any], model: str,
                      context_length: int | None = None, engine: str | None = None) -> dict[str, Any]:
    """Body for ``target``'s API with ``model`` as the upstream knows it; ``engine`` is what the engine
    calls itself (its /v1/models ``owned_by``), for the fields it names its own way."""
    if source == target:
        out = dict(body)
        out["model"] = model
        if target == "openai" and wants_stream(source, operation, body):
            # Ask for usage so the workload record gets token counts (the caller sees the
            # usage chunk only if it asked: see PassThrough).
            options = dict(out.get("stream_options") or {})
            options["include_usage"] = True
            out["stream_options"] = options
        return out
    if source == "ollama":
        return ollama_to_openai(operation, body, model, context_length, engine)
    return openai_to_ollama(operation, body, model)


def is_load_request(api: Api, operation: Operation, body: dict[str, Any]) -> bool:
    """An Ollama load or unload request: no prompt or messages, only the model (and keep_alive)."""
    if api != "ollama" or operation not in ("chat", "complete"):
        return False
    return not body.get("messages") if operation == "chat" else not body.get("prompt") and not body.get("images")
