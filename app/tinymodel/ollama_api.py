"""Ollama-compatible routes of the tiny model server (/api/...): NDJSON streams, stream=true by default."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from aiohttp import web

from app.services.json_types import JsonObject
from app.services.translate.wire import OllamaAnswer, OllamaFunctionCall, OllamaToolCall
from app.tinymodel.features import THINKING, json_answer, logprobs_of, more_calls, tool_to_call
from app.tinymodel.options import TinyModelOptions
from app.tinymodel.text import count_tokens, embed, reply_tokens
from app.tinymodel.window import published, refusal
from app.tinymodel.wire import BadRequest, Emitter, json_reply, read_json, resolve_model, state_of

OLLAMA_VERSION = "0.12.0"
_MODIFIED_AT = "2025-01-01T00:00:00Z"
_SIZE = 100_000_000


def ollama_error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _not_found(model: object) -> web.Response:
    return ollama_error(404, f'model "{model}" not found, try pulling it first')


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _details() -> JsonObject:
    return {"parent_model": "", "format": "gguf", "family": "tiny", "families": ["tiny"],
            "parameter_size": "1M", "quantization_level": "Q8_0"}


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


async def tags(request: web.Request) -> web.StreamResponse:
    models = [{"name": m, "model": m, "modified_at": _MODIFIED_AT, "size": _SIZE, "digest": _digest(m),
               "details": _details()} for m in state_of(request).opts.models]
    return await json_reply(request, {"models": models})


async def ps(request: web.Request) -> web.StreamResponse:
    opts = state_of(request).opts
    expires = (datetime.now(UTC) + timedelta(minutes=5)).isoformat().replace("+00:00", "Z")
    loaded = opts.loaded
    models = [{"name": m, "model": m, "size": _SIZE, "digest": _digest(m), "details": _details(),
               "expires_at": expires, "size_vram": 0,
               **({"context_length": opts.loaded_window or published(opts)} if published(opts) else {})}
              for m in opts.models if loaded is None or m in loaded]
    return await json_reply(request, {"models": models})


async def version(request: web.Request) -> web.StreamResponse:
    return await json_reply(request, {"version": OLLAMA_VERSION})


async def _body(request: web.Request, inference: bool = True) -> JsonObject | web.Response:
    try:
        body = await read_json(request)
    except BadRequest as exc:
        return ollama_error(400, str(exc))
    if inference:
        state_of(request).record_inference(request, body)
    model = body.get("model", body.get("name"))
    if not model:
        return ollama_error(400, "model is required")
    if resolve_model(model, state_of(request).opts.models) is None:
        return _not_found(model)
    body["model"] = model
    return body


async def show(request: web.Request) -> web.StreamResponse:
    body = await _body(request, inference=False)
    if isinstance(body, web.Response):
        return body
    return await json_reply(request, {
        "modelfile": f"FROM {body['model']}\n", "parameters": "", "template": "{{ .Prompt }}",
        "details": _details(), "model_info": {"general.architecture": "tiny",
                                                           **_trained(state_of(request).opts)},
        "capabilities": ["embedding"] if "embed" in str(body["model"]) else ["completion", "tools", "thinking"],
        "modified_at": _MODIFIED_AT,
    })


def _trained(opts: TinyModelOptions) -> dict[str, int]:
    window = published(opts)
    return {"tiny.context_length": window} if window else {}


def _plan(request: web.Request, body: JsonObject, prompt: str) -> tuple[list[str], str]:
    options = body.get("options")
    limit = options.get("num_predict") if isinstance(options, dict) else None
    natural = state_of(request).opts.reply_tokens
    if isinstance(limit, int) and 0 <= limit < natural:
        return reply_tokens(prompt, limit), "length"
    return reply_tokens(prompt, natural), "stop"


def _final_stats(prompt: str, tokens: list[str], started: int) -> OllamaAnswer:
    total = time.monotonic_ns() - started
    return {"total_duration": total, "load_duration": 1000, "prompt_eval_count": count_tokens(prompt),
            "prompt_eval_duration": total // 4, "eval_count": len(tokens), "eval_duration": total // 2}


def _extras(body: JsonObject, tokens: list[str], chat: bool) -> tuple[str, OllamaFunctionCall | None, str | None]:
    """The text (JSON under a format), a tool call instead of it, and the reasoning, as asked."""
    messages = body.get("messages")
    last = messages[-1] if chat and isinstance(messages, list) and messages else None
    last_role = last.get("role") if isinstance(last, dict) else None
    call = tool_to_call(body.get("tools"), last_role if isinstance(last_role, str) else None) if chat else None
    text = "".join(tokens)
    fmt = body.get("format") or None
    answered = json_answer(fmt, text) if fmt else None
    thinking = THINKING if body.get("think") not in (None, False) else None
    return (answered or text), call, thinking


async def _respond(request: web.Request, body: JsonObject, prompt: str, chat: bool) -> web.StreamResponse:
    started = time.monotonic_ns()
    model = str(body["model"])  # _body resolved it: one of this server's model names
    if (not body.get("messages") if chat else not body.get("prompt")):
        # A load (or, with keep_alive 0, unload) request: nothing is generated.
        unload = body.get("keep_alive") in (0, "0", "0s")
        empty = {"message": {"role": "assistant", "content": ""}} if chat else {"response": ""}
        return await json_reply(request, {"model": model, "created_at": _now(), **empty, "done": True,
                                          "done_reason": "unload" if unload else "load"})
    tokens, finish = _plan(request, body, prompt)
    raw_options = body.get("options")
    options: JsonObject = raw_options if isinstance(raw_options, dict) else {}
    opts = state_of(request).opts
    if opts.context_window is not None:  # the caller's num_ctx, else the loaded window, up to the trained one
        num_ctx = options.get("num_ctx")
        asked = num_ctx if isinstance(num_ctx, int) else opts.loaded_window
        opts = replace(opts, context_window=min(asked or opts.context_window, opts.context_window))
    too_long = refusal(opts, count_tokens(prompt), options.get("num_predict"))
    if too_long is not None:
        return too_long
    text, call, thinking = _extras(body, tokens, chat)
    calls = more_calls(body.get("tools"), call, state_of(request).opts.tool_calls) if call else []
    pieces = tokens if text == "".join(tokens) else [text]
    asked_top = body.get("top_logprobs")
    top = int(asked_top) if isinstance(asked_top, int | float | str) and asked_top else 1

    def piece(content: str, index: int | None, *, done: bool = False) -> OllamaAnswer:
        out: OllamaAnswer = {"model": model, "created_at": _now()}
        if chat:
            out["message"] = {"role": "assistant", "content": content}
        else:
            out["response"] = content
        if body.get("logprobs") and index is not None:
            out["logprobs"] = logprobs_of([content], top) if content else []
        out["done"] = done
        return out

    def think(line: OllamaAnswer, text: str) -> None:
        if chat:
            line["message"]["thinking"] = text
        else:
            line["thinking"] = text

    def final(content: str) -> OllamaAnswer:
        out = piece(content, None, done=True)
        out["done_reason"] = finish
        out.update(_final_stats(prompt, tokens, started))
        if not chat:
            out["context"] = [len(t) for t in tokens]
        return out

    ollama_calls: list[OllamaToolCall] = [{"function": c} for c in calls]
    if body.get("stream", True) is False:
        whole = final("" if call else text)
        if call:
            whole["message"]["tool_calls"] = ollama_calls
        if thinking:
            think(whole, thinking)
        if body.get("logprobs") and not call:
            whole["logprobs"] = logprobs_of(pieces, top)
        return await json_reply(request, whole)
    emitter = Emitter(request, "application/x-ndjson")
    await emitter.start()
    lines: list[OllamaAnswer] = []
    if thinking:
        for i, word in enumerate(thinking.split(" ")):
            line = piece("", None)
            think(line, word if i == 0 else " " + word)
            lines.append(line)
    if call:
        lines.append({"model": model, "created_at": _now(),
                      "message": {"role": "assistant", "content": "", "tool_calls": ollama_calls}, "done": False})
    else:
        lines += [piece(p, i) for i, p in enumerate(pieces)]
    lines.append(final(""))
    for line in lines:
        if not await emitter.send(json.dumps(line).encode() + b"\n"):
            return emitter.response
    return await emitter.finish()


async def chat(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    messages = body.get("messages") or []
    if not isinstance(messages, list):
        return ollama_error(400, "messages must be a list")
    prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    return await _respond(request, body, prompt, chat=True)


async def generate(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    return await _respond(request, body, str(body.get("prompt", "")), chat=False)


async def embed_route(request: web.Request) -> web.StreamResponse:
    started = time.monotonic_ns()
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    raw = body.get("input", "")
    inputs = [raw] if isinstance(raw, str) else [str(x) for x in raw] if isinstance(raw, list) else None
    if inputs is None:
        return ollama_error(400, "input must be a string or a list of strings")
    asked_dim = body.get("dimensions")
    dim = asked_dim if isinstance(asked_dim, int) and asked_dim else state_of(request).opts.embedding_dim
    return await json_reply(request, {
        "model": body["model"], "embeddings": [embed(t, dim) for t in inputs],
        "total_duration": time.monotonic_ns() - started, "load_duration": 1000,
        "prompt_eval_count": sum(count_tokens(t) for t in inputs),
    })


async def embeddings_legacy(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    return await json_reply(request, {"embedding": embed(str(body.get("prompt", "")),
                                                         state_of(request).opts.embedding_dim)})


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/tags", tags)
    app.router.add_get("/api/ps", ps)
    app.router.add_get("/api/version", version)
    app.router.add_post("/api/show", show)
    app.router.add_post("/api/chat", chat)
    app.router.add_post("/api/generate", generate)
    app.router.add_post("/api/embed", embed_route)
    app.router.add_post("/api/embeddings", embeddings_legacy)
