"""OpenAI-compatible routes of the tiny model server (/v1/...), shaped like the real API."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import time
from collections.abc import Mapping

from aiohttp import web

from app.services.json_types import JsonObject, JsonValue
from app.services.translate.wire import (
    OllamaFunctionCall,
    OpenAILogprobs,
    OpenAIReply,
    OpenAIToolCall,
    OpenAIUsage,
)
from app.tinymodel.features import THINKING, json_answer, logprobs_of, tool_to_call
from app.tinymodel.text import count_tokens, embed, reply_tokens
from app.tinymodel.window import published, refusal
from app.tinymodel.wire import BadRequest, Emitter, json_reply, read_json, resolve_model, state_of

_CREATED = 1_700_000_000  # fixed "created" for /v1/models so listings are stable


def openai_error(status: int, message: str, type_: str, code: str | None = None) -> web.Response:
    payload = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    return web.json_response(payload, status=status)


def _model_not_found(model: object) -> web.Response:
    return openai_error(
        404, f"The model `{model}` does not exist or you do not have access to it.",
        "invalid_request_error", "model_not_found",
    )


def _prompt_of_messages(messages: JsonValue) -> str:
    if not isinstance(messages, list):
        raise BadRequest("'messages' must be a list")
    parts: list[str] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts: keep only the text ones
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


def _plan(request: web.Request, body: JsonObject, prompt: str) -> tuple[list[str], str]:
    """Tokens to send and the finish reason, honouring max_tokens against the configured reply length."""
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    natural = state_of(request).opts.reply_tokens
    if limit is not None and not isinstance(limit, int):
        raise BadRequest("max_tokens must be an integer")
    if limit is not None and limit < natural:
        return reply_tokens(prompt, limit), "length"
    return reply_tokens(prompt, natural), "stop"


def _id(prefix: str, seed: str) -> str:
    return f"{prefix}-{hashlib.sha256(f'{time.time_ns()}{seed}'.encode()).hexdigest()[:24]}"


def _sse(payload: Mapping[str, object]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


async def list_models(request: web.Request) -> web.StreamResponse:
    opts = state_of(request).opts
    window = {"max_model_len": published(opts)} if published(opts) else {}
    data = [{"id": m, "object": "model", "created": _CREATED, "owned_by": opts.owned_by, **window}
            for m in opts.models]
    return await json_reply(request, {"object": "list", "data": data})


async def get_model(request: web.Request) -> web.StreamResponse:
    name = request.match_info["model"]
    if resolve_model(name, state_of(request).opts.models) is None:
        return _model_not_found(name)
    return await json_reply(request, {"id": name, "object": "model", "created": _CREATED,
                                      "owned_by": state_of(request).opts.owned_by})


async def _inference_body(request: web.Request) -> JsonObject | web.Response:
    try:
        body = await read_json(request)
    except BadRequest as exc:
        return openai_error(400, str(exc), "invalid_request_error")
    state_of(request).record_inference(request, body)
    if resolve_model(body.get("model"), state_of(request).opts.models) is None:
        return _model_not_found(body.get("model"))
    return body


def _usage(prompt: str, completion: int) -> OpenAIUsage:
    prompt_tokens = count_tokens(prompt)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion}


def _wants_usage(body: JsonObject) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def _forced_tool(body: JsonObject) -> str | None:
    """The function the caller forces: a named one, or any ("required") = the first offered."""
    choice, tools = body.get("tool_choice"), body.get("tools")
    if isinstance(choice, dict):
        return str(_name_of(choice.get("function")))
    if choice == "required":
        return str(_name_of(tools[0].get("function") if isinstance(tools, list) and tools and
                            isinstance(tools[0], dict) else None))
    return None


def _name_of(function: JsonValue) -> JsonValue:
    return function.get("name") if isinstance(function, dict) else None


def _count(value: JsonValue, otherwise: int) -> int:
    """A count the caller asked for (a number), else ``otherwise``."""
    return int(value) if isinstance(value, int | float) and value else otherwise


def _openai_logprobs(tokens: list[str], body: JsonObject) -> OpenAILogprobs | None:
    if not body.get("logprobs"):
        return None
    items = logprobs_of(tokens, _count(body.get("top_logprobs"), 1))
    return {"content": [{"token": i["token"], "logprob": i["logprob"], "bytes": list(i["token"].encode()),
                         "top_logprobs": [{"token": t["token"], "logprob": t["logprob"], "bytes": list(t["token"].encode())}
                                          for t in i["top_logprobs"]]}
                        for i in items], "refusal": None}


def _answer(body: JsonObject, prompt: str, tokens: list[str]) -> tuple[str | None, OllamaFunctionCall | None]:
    """The message content, or a tool call instead of it."""
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    role = last.get("role") if isinstance(last, dict) else None
    last_role = role if isinstance(role, str) else None
    call = None if body.get("tool_choice") == "none" else tool_to_call(body.get("tools"), last_role, _forced_tool(body))
    if call is not None:
        return None, call
    return json_answer(_format_of(body), "".join(tokens)) or "".join(tokens), None


def _format_of(body: JsonObject) -> JsonValue:
    fmt = body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_schema":
        json_schema = fmt.get("json_schema")
        return json_schema.get("schema") if isinstance(json_schema, dict) else None
    return "json" if fmt.get("type") == "json_object" else None


async def chat_completions(request: web.Request) -> web.StreamResponse:
    body = await _inference_body(request)
    if isinstance(body, web.Response):
        return body
    try:
        prompt = _prompt_of_messages(body.get("messages"))
        tokens, finish = _plan(request, body, prompt)
    except BadRequest as exc:
        return openai_error(400, str(exc), "invalid_request_error")
    too_long = refusal(state_of(request).opts, count_tokens(prompt), body.get("max_completion_tokens",
                                                                          body.get("max_tokens")))
    if too_long is not None:
        return too_long
    model, created, cid = str(body["model"]), int(time.time()), _id("chatcmpl", prompt)
    usage = _usage(prompt, len(tokens))
    content, call = _answer(body, prompt, tokens)
    thinking = THINKING if body.get("reasoning_effort") else None
    arguments = "" if call is None else json.dumps(call["arguments"])
    if state_of(request).opts.fail_mode == "bad_tool_arguments":
        arguments = arguments[: len(arguments) // 2]  # cut: not JSON
    tool_calls: list[OpenAIToolCall] | None = None if call is None else [
        {"id": "call_tiny0", "type": "function", "function": {"name": call["name"], "arguments": arguments}}]
    if call is not None:
        finish = "tool_calls"
    logprobs = _openai_logprobs(tokens, body) if content is not None else None
    if not body.get("stream"):
        message: OpenAIReply = {"role": "assistant", "content": content, "refusal": None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if thinking:
            message["reasoning_content"] = thinking
        return await json_reply(request, {
            "id": cid, "object": "chat.completion", "created": created, "model": model,
            "system_fingerprint": "fp_tiny",
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": logprobs, "message": message}],
            "usage": usage,
        })

    def chunk(delta: OpenAIReply, finish_reason: str | None, lp: OpenAILogprobs | None = None) -> bytes:
        return _sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                     "system_fingerprint": "fp_tiny",
                     "choices": [{"index": 0, "delta": delta, "logprobs": lp, "finish_reason": finish_reason}]})

    emitter = Emitter(request, "text/event-stream")
    await emitter.start()
    frames = [chunk({"role": "assistant", "content": ""}, None)]
    if thinking:
        frames += [chunk({"reasoning_content": word if i == 0 else " " + word}, None)
                   for i, word in enumerate(thinking.split(" "))]
    if tool_calls:
        half = len(arguments) // 2
        frames.append(chunk({"tool_calls": [{"index": 0, "id": "call_tiny0", "type": "function",
                                             "function": {"name": call["name"] if call else "", "arguments": ""}}]}, None))
        frames += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}, None)
                   for piece in (arguments[:half], arguments[half:])]
    elif logprobs is not None or content != "".join(tokens):
        pieces = [content or ""] if content != "".join(tokens) else tokens
        for i, piece in enumerate(pieces):
            lp: OpenAILogprobs | None = {"content": logprobs["content"][i:i + 1], "refusal": None} if logprobs else None
            frames.append(chunk({"content": piece}, None, lp))
    else:
        frames += [chunk({"content": t}, None) for t in tokens]
    frames.append(chunk({}, finish))
    if _wants_usage(body):
        frames.append(_sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                            "system_fingerprint": "fp_tiny", "choices": [], "usage": usage}))
    frames.append(b"data: [DONE]\n\n")
    for frame in frames:
        if not await emitter.send(frame):
            return emitter.response
    return await emitter.finish()


async def completions(request: web.Request) -> web.StreamResponse:
    body = await _inference_body(request)
    if isinstance(body, web.Response):
        return body
    prompt_field = body.get("prompt", "")
    prompt = "\n".join(map(str, prompt_field)) if isinstance(prompt_field, list) else str(prompt_field)
    try:
        tokens, finish = _plan(request, body, prompt)
    except BadRequest as exc:
        return openai_error(400, str(exc), "invalid_request_error")
    too_long = refusal(state_of(request).opts, count_tokens(prompt), body.get("max_tokens"))
    if too_long is not None:
        return too_long
    model, created, cid = str(body["model"]), int(time.time()), _id("cmpl", prompt)
    usage = _usage(prompt, len(tokens))
    fmt = _format_of(body)
    if fmt is not None:  # llama.cpp and vLLM take response_format on completions too
        tokens = [json_answer(fmt, "".join(tokens)) or ""]
    if not body.get("stream"):
        return await json_reply(request, {
            "id": cid, "object": "text_completion", "created": created, "model": model,
            "system_fingerprint": "fp_tiny",
            "choices": [{"index": 0, "text": "".join(tokens), "logprobs": _legacy_logprobs(tokens, body),
                         "finish_reason": finish}],
            "usage": usage,
        })

    def chunk(text: str, finish_reason: str | None) -> bytes:
        return _sse({"id": cid, "object": "text_completion", "created": created, "model": model,
                     "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}]})

    emitter = Emitter(request, "text/event-stream")
    await emitter.start()
    frames = [chunk(t, None) for t in tokens] + [chunk("", finish)]
    if _wants_usage(body):
        frames.append(_sse({"id": cid, "object": "text_completion", "created": created, "model": model,
                            "choices": [], "usage": usage}))
    frames.append(b"data: [DONE]\n\n")
    for frame in frames:
        if not await emitter.send(frame):
            return emitter.response
    return await emitter.finish()


def _legacy_logprobs(tokens: list[str], body: JsonObject) -> OpenAILogprobs | None:
    if body.get("logprobs") is None:
        return None
    items = logprobs_of(tokens, max(1, _count(body["logprobs"], 1)))
    offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    return {"tokens": tokens, "token_logprobs": [i["logprob"] for i in items],
            "top_logprobs": [{t["token"]: t["logprob"] for t in i["top_logprobs"]} for i in items],
            "text_offset": offsets}


def _encode(vector: list[float], encoding_format: JsonValue) -> list[float] | str:
    if encoding_format == "base64":  # little-endian float32, as the openai client decodes it
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
    return vector


async def embeddings(request: web.Request) -> web.StreamResponse:
    body = await _inference_body(request)
    if isinstance(body, web.Response):
        return body
    raw = body.get("input")
    if isinstance(raw, str):
        inputs = [raw]
    elif isinstance(raw, list) and raw:
        inputs = [x if isinstance(x, str) else json.dumps(x) for x in raw]
    else:
        return openai_error(400, "'input' must be a string or a non-empty list", "invalid_request_error")
    asked_dim = body.get("dimensions")
    dim = asked_dim if isinstance(asked_dim, int) and asked_dim else state_of(request).opts.embedding_dim
    data = [{"object": "embedding", "index": i, "embedding": _encode(embed(text, dim), body.get("encoding_format"))}
            for i, text in enumerate(inputs)]
    prompt_tokens = sum(count_tokens(t) for t in inputs)
    return await json_reply(request, {
        "object": "list", "data": data, "model": body["model"],
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    })


def add_routes(app: web.Application) -> None:
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model:.+}", get_model)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/embeddings", embeddings)
