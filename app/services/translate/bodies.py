"""Whole (non-streamed) response bodies between the two APIs."""

from __future__ import annotations

import time
from typing import Any

from app.services.translate.responses import Usage, _now_rfc3339, ollama_done_fields, openai_usage
from app.services.translate.shapes import Api, Operation


def usage_of(api: Api, body: dict[str, Any]) -> Usage:
    if api == "openai":
        u = body.get("usage") or {}
        return Usage(u.get("prompt_tokens"), u.get("completion_tokens"))
    return Usage(body.get("prompt_eval_count"), body.get("eval_count"))


def translate_body(
    upstream: Api, client: Api, operation: Operation, body: dict[str, Any], model: str, started_ns: int
) -> dict[str, Any]:
    if upstream == client:
        return body
    if operation in ("embed", "embed_legacy"):
        return _embeddings(upstream, operation, body, model)
    usage = usage_of(upstream, body)
    if upstream == "openai":
        choice = (body.get("choices") or [{}])[0]
        text = (choice.get("message") or {}).get("content") if operation == "chat" else choice.get("text")
        out: dict[str, Any] = {"model": model, "created_at": _now_rfc3339()}
        if operation == "chat":
            out["message"] = {"role": "assistant", "content": text or ""}
        else:
            out["response"] = text or ""
        out["done"] = True
        out.update(ollama_done_fields(choice.get("finish_reason"), usage, started_ns))
        return out
    text = (body.get("message") or {}).get("content", "") if operation == "chat" else body.get("response", "")
    finish = body.get("done_reason") or "stop"
    created = int(time.time())
    if operation == "chat":
        return {
            "id": f"chatcmpl-{time.time_ns():x}",
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish, "logprobs": None}
            ],
            "usage": openai_usage(usage),
        }
    return {
        "id": f"cmpl-{time.time_ns():x}",
        "object": "text_completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "text": text, "finish_reason": finish, "logprobs": None}],
        "usage": openai_usage(usage),
    }


def _embeddings(upstream: Api, operation: Operation, body: dict[str, Any], model: str) -> dict[str, Any]:
    if upstream == "openai":
        vectors = [item.get("embedding", []) for item in sorted(body.get("data") or [], key=lambda d: d.get("index", 0))]
        if operation == "embed_legacy":
            return {"embedding": vectors[0] if vectors else []}
        prompt_tokens = (body.get("usage") or {}).get("prompt_tokens", 0)
        return {"model": model, "embeddings": vectors, "total_duration": 0, "load_duration": 0,
                "prompt_eval_count": prompt_tokens}
    vectors = body.get("embeddings") or ([body["embedding"]] if "embedding" in body else [])
    prompt_tokens = body.get("prompt_eval_count") or 0
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }
