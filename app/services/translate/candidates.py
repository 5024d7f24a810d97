"""The request body each candidate upstream gets, in its own API; and Ollama's load answers."""

from __future__ import annotations

from app.services.backends.base import Upstream
from app.services.backends.windows import context_length_of
from app.services.json_types import JsonObject
from app.services.translate.refusal import Untranslatable
from app.services.translate.requests import translate_request
from app.services.translate.responses import now_rfc3339
from app.services.translate.shapes import Api, Operation

CandidateBody = tuple[Upstream, Api, JsonObject]

__all__ = ["context_length_of", "for_candidates", "load_answer"]


def context_length(upstream: Upstream, canonical: str) -> int | None:
    return upstream.window(canonical)


def engine_of(upstream: Upstream, canonical: str) -> str | None:
    """What the engine serving the model calls itself (its /v1/models ``owned_by``: "vllm", "llamacpp")."""
    entry = upstream.entry_for(canonical)
    owner = entry.details.get("owned_by") if entry is not None else None
    return owner.strip().lower() if isinstance(owner, str) else None


def for_candidates(api: Api, operation: Operation, body: JsonObject, canonical: str, requested: str,
                   candidates: list[Upstream]) -> tuple[list[CandidateBody], list[Untranslatable]]:
    bodies: list[CandidateBody] = []
    refusals: list[Untranslatable] = []
    for upstream in candidates:
        target = upstream.api_for(api)
        model = upstream.upstream_model(canonical) or requested
        try:
            bodies.append((upstream, target, translate_request(api, target, operation, body, model,
                                                               context_length(upstream, canonical),
                                                               engine_of(upstream, canonical))))
        except Untranslatable as exc:
            refusals.append(exc)
    return bodies, refusals


def load_answer(operation: Operation, body: JsonObject, model: str) -> JsonObject:
    """Ollama's answer to a load (or, with keep_alive 0, unload) request: nothing generated.
    An OpenAI-API engine keeps its model loaded as it was configured to."""
    unload = body.get("keep_alive") in (0, "0", "0s", "0m")
    out: JsonObject = {"model": model, "created_at": now_rfc3339()}
    if operation == "chat":
        out["message"] = {"role": "assistant", "content": ""}
    else:
        out["response"] = ""
    out.update({"done": True, "done_reason": "unload" if unload else "load"})
    return out
