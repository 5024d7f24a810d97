"""An Ollama request for an OpenAI-API engine: every field translated, dropped as a hint, or refused.

What each field becomes is in fields.OLLAMA_TO_OPENAI (also the README's table)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

from app.services.json_types import JsonObject, JsonValue
from app.services.translate.fields import ENGINE_NAMES, OLLAMA_TO_OPENAI, copies, fate, is_empty, why
from app.services.translate.images import data_url
from app.services.translate.refusal import Untranslatable
from app.services.translate.shapes import Operation, wants_stream
from app.services.translate.tool_calls import ToolCallIds, ollama_calls_to_openai
from app.services.translate.wire import OllamaMessage, OllamaRequest, OpenAIMessage, OpenAIRequest, OpenAITool

SAME_OPTIONS = copies(OLLAMA_TO_OPENAI, "options.")  # option -> the OpenAI field it is copied to


def refuse_unknown(body: Mapping[str, object], prefix: str = "") -> None:
    """Refuses the first field the table refuses (or does not know); an empty value is an absent one."""
    for name, value in body.items():
        path = prefix + name
        if is_empty(value):
            continue
        if fate(OLLAMA_TO_OPENAI, path) == "refused":
            raise Untranslatable(path, "openai", why(OLLAMA_TO_OPENAI, path, "the OpenAI API has no such field"))


def ollama_to_openai(operation: Operation, body: OllamaRequest, model: str,
                     context_length: int | None, engine: str | None = None) -> OpenAIRequest:
    """``engine``: what the engine calls itself (its /v1/models ``owned_by``), for the fields it
    names its own way (fields.ENGINE_NAMES)."""
    refuse_unknown(body)
    out: OpenAIRequest = {"model": model}
    if operation in ("embed", "embed_legacy"):
        out["input"] = body.get("input", body.get("prompt", ""))
        if body.get("dimensions") is not None:
            out["dimensions"] = body["dimensions"]
        return out
    if operation == "chat":
        out["messages"] = messages_to_openai(body.get("messages") or [])
        if body.get("tools"):
            out["tools"] = cast(list[OpenAITool], body["tools"])  # Ollama's tools are OpenAI's shape (checks.TOOLS)
    else:
        if body.get("images"):
            raise Untranslatable("images", "openai", OLLAMA_TO_OPENAI["images"].how)
        prompt = body.get("prompt") or ""
        out["prompt"] = f"{body['system']}\n\n{prompt}" if body.get("system") else prompt
        if body.get("suffix"):
            out["suffix"] = body["suffix"]
    # The options' OpenAI names come from the field table (fields.OLLAMA_TO_OPENAI) and ENGINE_NAMES.
    out.update(cast(OpenAIRequest, options_to_openai(body.get("options") or {}, context_length, engine)))
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


def options_to_openai(options: JsonObject, context_length: int | None,
                      engine: str | None = None) -> JsonObject:
    out: JsonObject = {}
    own_names = ENGINE_NAMES.get(engine or "", {})
    for name, value in options.items():
        if is_empty(value):
            continue
        if name in SAME_OPTIONS:
            out[own_names.get(f"options.{name}", SAME_OPTIONS[name])] = value
        elif name == "num_predict":
            if isinstance(value, int | float) and value >= 0:  # -1 (and -2): as long as the model goes, OpenAI's default
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


def response_format(fmt: JsonValue) -> JsonObject:
    if fmt == "json":
        return {"type": "json_object"}
    if isinstance(fmt, dict):
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": fmt, "strict": True}}
    raise Untranslatable("format", "openai", "only \"json\" or a JSON schema object")


def think_to_openai(think: bool | str | None) -> OpenAIRequest:
    if think is None:
        return {}
    if think is False:
        return {"chat_template_kwargs": {"enable_thinking": False}}
    return {"reasoning_effort": "medium" if think is True else think}


def messages_to_openai(messages: list[OllamaMessage]) -> list[OpenAIMessage]:
    ids = ToolCallIds()
    out: list[OpenAIMessage] = []
    for index, message in enumerate(messages):
        role = message.get("role", "user")
        converted: OpenAIMessage = {"role": role}
        text = message.get("content") or ""
        images = message.get("images") or []
        if images:
            parts: list[JsonObject] = [{"type": "text", "text": text}] if text else []
            parts += [{"type": "image_url", "image_url": {"url": data_url(image)}} for image in images]
            converted["content"] = parts
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
