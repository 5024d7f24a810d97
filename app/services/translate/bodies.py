"""Whole (non-streamed) response bodies between the two APIs; the model is named as the caller sent it.

An engine's answer is read as its API documents it (wire.py); a shape it breaks fails as the
translation's error (inference.py answers 502 naming the engine), never as a wrong answer."""

from __future__ import annotations

import base64
import struct
import time
from typing import cast

from app.services.json_types import JsonObject, JsonValue
from app.services.translate import logprobs
from app.services.translate.forced import answer_as_call, forced_functions
from app.services.translate.messages_out import (
    ollama_done_reason,
    ollama_message_to_openai,
    openai_message_to_ollama,
)
from app.services.translate.responses import Usage, now_rfc3339, ollama_done_fields, openai_usage
from app.services.translate.shapes import Api, Operation
from app.services.translate.tool_calls import call_id
from app.services.translate.wire import OllamaAnswer, OpenAIAnswer, OpenAIChoice, OpenAIRequest


def usage_of(api: Api, body: JsonObject) -> Usage:
    if api == "openai":
        u = cast(OpenAIAnswer, body).get("usage") or {}
        return Usage(u.get("prompt_tokens"), u.get("completion_tokens"))
    answer = cast(OllamaAnswer, body)
    return Usage(answer.get("prompt_eval_count"), answer.get("eval_count"))


def translate_body(upstream: Api, client: Api, operation: Operation, body: JsonObject, model: str,
                   started_ns: int, client_body: JsonObject) -> JsonObject:
    if upstream == client:
        return {**body, "model": model} if "model" in body else body
    if operation in ("embed", "embed_legacy"):
        return _embeddings(upstream, operation, body, model, client_body.get("encoding_format"), started_ns)
    usage = usage_of(upstream, body)
    if upstream == "openai":
        return cast(JsonObject, _to_ollama(operation, cast(OpenAIAnswer, body), model, usage, started_ns))
    out = _to_openai(operation, cast(OllamaAnswer, body), model, usage)
    if operation == "chat":
        shape_calls(out["choices"][0], cast(OpenAIRequest, client_body))
    return cast(JsonObject, out)


def shape_calls(choice: OpenAIChoice, client_body: OpenAIRequest) -> None:
    """What the OpenAI caller asked of tool calls that Ollama cannot do itself: a forced call (the
    constrained answer is the call) and ``parallel_tool_calls: false`` (the first call only)."""
    message = choice["message"]
    forced = forced_functions(client_body)
    if forced and not message.get("tool_calls"):
        name, arguments = answer_as_call(message.get("content") or "", forced)
        message["tool_calls"] = [{"id": call_id(arguments, 0), "type": "function",
                                  "function": {"name": name, "arguments": arguments}}]
        message["content"] = None
        choice["finish_reason"] = "tool_calls"
    if client_body.get("parallel_tool_calls") is False and message.get("tool_calls"):
        message["tool_calls"] = message["tool_calls"][:1]


def _to_ollama(operation: Operation, body: OpenAIAnswer, model: str, usage: Usage, started_ns: int) -> OllamaAnswer:
    choice: OpenAIChoice = (body.get("choices") or [{}])[0]
    out: OllamaAnswer = {"model": model, "created_at": now_rfc3339()}
    if operation == "chat":
        out["message"] = openai_message_to_ollama(choice.get("message") or {})
    else:
        out["response"] = choice.get("text") or ""
    out["done"] = True
    out.update(ollama_done_fields(ollama_done_reason(choice.get("finish_reason")), usage, started_ns))
    converted = logprobs.openai_to_ollama(choice.get("logprobs"))
    if converted:
        out["logprobs"] = converted
    return out


def _to_openai(operation: Operation, body: OllamaAnswer, model: str, usage: Usage) -> OpenAIAnswer:
    created = int(time.time())
    if operation == "chat":
        message = ollama_message_to_openai(body.get("message") or {})
        finish = "tool_calls" if message.get("tool_calls") else (body.get("done_reason") or "stop")
        return {"id": f"chatcmpl-{time.time_ns():x}", "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish,
                             "logprobs": logprobs.ollama_to_openai_chat(body.get("logprobs"))}],
                "usage": openai_usage(usage)}
    return {"id": f"cmpl-{time.time_ns():x}", "object": "text_completion", "created": created, "model": model,
            "choices": [{"index": 0, "text": body.get("response", ""), "finish_reason": body.get("done_reason") or "stop",
                         "logprobs": logprobs.ollama_to_openai_legacy(body.get("logprobs"))}],
            "usage": openai_usage(usage)}


def _embeddings(upstream: Api, operation: Operation, body: JsonObject, model: str,
                encoding_format: JsonValue, started_ns: int) -> JsonObject:
    return cast(JsonObject, _embeddings_answer(upstream, operation, body, model, encoding_format, started_ns))


def _embeddings_answer(upstream: Api, operation: Operation, body: JsonObject, model: str,
                       encoding_format: JsonValue, started_ns: int) -> OllamaAnswer | OpenAIAnswer:
    if upstream == "openai":
        answer = cast(OpenAIAnswer, body)
        data = sorted(answer.get("data") or [], key=lambda d: d.get("index", 0))
        vectors: list[list[float]] = [_floats(item.get("embedding", [])) for item in data]
        if operation == "embed_legacy":
            return {"embedding": vectors[0] if vectors else []}
        prompt_tokens = (answer.get("usage") or {}).get("prompt_tokens", 0)
        # Ollama always sends its durations (some clients' schemas require them); the load is the engine's own.
        return {"model": model, "embeddings": vectors, "total_duration": time.monotonic_ns() - started_ns,
                "load_duration": 0, "prompt_eval_count": prompt_tokens}
    ollama = cast(OllamaAnswer, body)
    vectors = ollama.get("embeddings") or ([ollama["embedding"]] if "embedding" in ollama else [])
    prompt_tokens = ollama.get("prompt_eval_count") or 0
    listed: OpenAIAnswer = {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": _encoded(v, encoding_format)}
                 for i, v in enumerate(vectors)],
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }
    return listed


def _encoded(vector: list[float], encoding_format: JsonValue) -> list[float] | str:
    if encoding_format == "base64":  # little-endian float32, as OpenAI sends it
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
    return vector


def _floats(embedding: list[float] | str) -> list[float]:
    if isinstance(embedding, str):
        raw = base64.b64decode(embedding)
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return list(embedding)
