"""Request bodies for the serving engine's API: passed as is within one API, translated across.

Across APIs every field is translated, dropped as a hint, or refused by name (Untranslatable);
see to_openai.py, to_ollama.py and the table in fields.py."""

from __future__ import annotations

from typing import cast

from app.services.json_types import JsonObject
from app.services.translate.shapes import Api, Operation, wants_stream
from app.services.translate.to_ollama import openai_to_ollama
from app.services.translate.to_openai import ollama_to_openai
from app.services.translate.wire import OllamaRequest, OpenAIRequest


def translate_request(source: Api, target: Api, operation: Operation, body: JsonObject, model: str,
                      context_length: int | None = None, engine: str | None = None) -> JsonObject:
    """Body for ``target``'s API with ``model`` as the upstream knows it; ``engine`` is what the engine
    calls itself (its /v1/models ``owned_by``), for the fields it names its own way. ``body`` was
    checked by its field table (validate.py), so it is read as its API's request shape; the
    translated request, a wire shape of JSON values, goes on as the JSON object it is."""
    if source == target:
        out = dict(body)
        out["model"] = model
        if target == "openai" and wants_stream(source, operation, body):
            # Ask for usage so the workload record gets token counts (the caller sees the
            # usage chunk only if it asked: see PassThrough).
            asked = out.get("stream_options")
            options = dict(asked) if isinstance(asked, dict) else {}
            options["include_usage"] = True
            out["stream_options"] = options
        return out
    if source == "ollama":
        return cast(JsonObject, ollama_to_openai(operation, cast(OllamaRequest, body), model, context_length, engine))
    return cast(JsonObject, openai_to_ollama(operation, cast(OpenAIRequest, body), model))


def is_load_request(api: Api, operation: Operation, body: JsonObject) -> bool:
    """An Ollama load or unload request: no prompt or messages, only the model (and keep_alive)."""
    if api != "ollama" or operation not in ("chat", "complete"):
        return False
    return not body.get("messages") if operation == "chat" else not body.get("prompt") and not body.get("images")
