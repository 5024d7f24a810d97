"""An Ollama request for an OpenAI-API engine: every field translated, dropped as a hint, or refused.

What each field becomes is in fields.OLLAMA_TO_OPENAI (also the README's table)."""

from __future__ import annotations

import json
from typing import Any

from app.services.translate.fields import ENGINE_NAMES, OLLAMA_TO_OPENAI, copies, fate, is_empty, why
from app.services.translate.images import data_url
from app.services.translate.refusal import Untranslatable
from app.services.translate.shapes import Operation, wants_stream
from app.services.translate.tool_calls import ToolCallIds, ollama_calls_to_openai

SAME_OPTIONS = copies(OLLAMA_TO_OPENAI, "options.")  # option -> the OpenAI field it is copied to


def refuse_unknown(body: dict[str, Any], prefix: str = "") -> None:
    """Refuses the first field the table refuses (or does not know); an empty value is an absent one."""
    for name, value in body.items():
        path = prefix + name
        if is_empty(value):
            continue
        if fate(OLLAMA_TO_OPENAI, path) == "refused":
            raise Untranslatable(path, "openai", why(OLLAMA_TO_OPENAI, path, "the OpenAI API has no such field"))


def ollama_to_openai(operation: Operation, body: dict[str, Any], model: str,
                     context_length: int | None, engine: str | None = None) -> dict[str, Any]:
    """``engine``: what the engine calls itself (its /v1/models ``owned_by``), for the fields it
    names its own way (fields.ENGINE_NAMES)."""
    refuse_unknown(body)
    out: dict[str, Any] = {"model": model}
    if operation in ("embed", "embed_legacy"):
        out["input"] = body.get("input", body.get("prompt", ""))
        if body.get("dimensions") is not None:
            out["dimensions"] = body["dimensions"]
        return out
    if operation == "chat":
        out["messages"] = messages_to_openai(body.get("messages") or [])
        if body.get("tools"):
            out["tools"] = body["tools"]
    else:
        if body.get("images"):
            raise Untranslatable("images", "openai", OLLAMA_TO_OPENAI["images"].how)
        prompt = body.get("prompt") or ""
        out["prompt"] = f"{body['system']}\n\n{prompt}" if body.get("system") else prompt
        if body.get("suffix"):
            out["suffix"] = body["suffix"]
    out.update(options_to_openai(body.get("options") or {}, context_length, engine))
    if body.get("format"):  # "" is Ollama's "no format"
        out["response_format"] = response_format(body["format"])
    out.update(think_to_openai(body.get("think")))
    if body.get("logprobs"):
        if operation == "chat":
            out["logprobs"] = True
            if body.get("top_logprobs") is not None:
                out["top_logprobs"] = body["top_logprobs"]
        else:
            out["logprobs"] = body.get("top_logprobs") or 0
    if wants_stream("ollama", operation, body):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}  # the job's token counts
    else:
        out["stream"] = False
    return out


def options_to_openai(options: dict[str, Any], context_length: int | None,
                      engine: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    own_names = ENGINE_NAMES.get(engine or "", {})
    for name, value in options.items():
        if is_empty(value):
            continue
        if name in SAME_OPTIONS:
            out[own_names.get(f"options.{name}", SAME_OPTIONS[name])] = value
        elif name == "num_predict":
            if value >= 0:  # -1 (and -2): as long as the model goes, OpenAI's default
                out["max_tokens"] = value
        elif name == "num_ctx":
            # The window of an OpenAI-API engine is set where it runs: num_ctx is a hint, never a
            # reason to refuse (llama-index sends 3900 on every call). Whether the request fits the
            # window is routing's question (routing/fit.py), asked of the request's real size.
            continue
        elif fate(OLLAMA_TO_OPENAI, f"options.{name}") != "dropped":
            raise Untranslatable(f"options.{name}", "openai", why(OLLAMA_TO_OPENAI, f"options.{name}",
                                                                  "no OpenAI counterpart"))
    return out


def response_format(fmt: Any) -> dict[str, Any]:
    if fmt == "json":
        return {"type": "json_object"}
    if isinstance(fmt, dict):
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": fmt, "strict": True}}
    raise Untranslatable("format", "openai", "only \"json\" or a JSON schema object")


def think_to_openai(think: Any) -> dict[str, Any]:
    if think is None:
        return {}
    if think is False:
        return {"chat_template_kwargs": {"enable_thinking": False}}
    return {"reasoning_effort": "medium" if think is True else think}


def messages_to_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = ToolCallIds()
    out = []
    for index, message in enumerate(messages):
        role = message.get("role", "user")
        converted: dict[str, Any] = {"role": role}
        text = message.get("content") or ""
        images = message.get("images") or []
        if images:
            converted["content"] = ([{"type": "text", "text": text}] if text else []) + [
                {"type": "image_url", "image_url": {"url": data_url(image)}} for image in images]
        else:
            converted["content"] = text
        if message.get("tool_calls"):
            seed = json.dumps(message["tool_calls"], sort_keys=True) + str(index)
            converted["tool_calls"] = ollama_calls_to_openai(message["tool_calls"], seed)
            # Ollama's content is a string, "" when absent (the ollama client leaves "" out), and stays
            # one: llama.cpp's server refuses a null content.
            ids.called(converted["tool_calls"])
        if role == "tool":
            converted["tool_call_id"] = ids.answer(message.get("tool_name"))
        out.append(converted)
    return out
