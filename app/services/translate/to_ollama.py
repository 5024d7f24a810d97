"""An OpenAI request for an Ollama-API engine: every field translated, dropped as a hint, or refused.

What each field becomes is in fields.OPENAI_TO_OLLAMA (also the README's table)."""

from __future__ import annotations

from typing import cast

from app.services.json_types import JsonObject, JsonValue
from app.services.translate.fields import OPENAI_TO_OLLAMA, copies, fate, is_empty
from app.services.translate.fields import why as table_why
from app.services.translate.forced import forced_format, forced_functions
from app.services.translate.images import base64_of
from app.services.translate.refusal import Untranslatable
from app.services.translate.shapes import Operation, wants_stream
from app.services.translate.tool_calls import names_by_id, openai_calls_to_ollama
from app.services.translate.wire import OllamaMessage, OllamaRequest, OpenAIMessage, OpenAIRequest

# field -> the Ollama option it is copied to
TO_OPTIONS = {name: to.removeprefix("options.") for name, to in copies(OPENAI_TO_OLLAMA).items()
              if to.startswith("options.")}


def refuse(field: str, why: str | None = None) -> Untranslatable:
    return Untranslatable(field, "ollama", why or table_why(OPENAI_TO_OLLAMA, field, "the Ollama API has no such field"))


def openai_to_ollama(operation: Operation, body: OpenAIRequest, model: str) -> OllamaRequest:
    for name, value in body.items():
        if not is_empty(value) and fate(OPENAI_TO_OLLAMA, name) == "refused":
            raise refuse(name)
    out: OllamaRequest = {"model": model}
    if operation in ("embed", "embed_legacy"):
        out["input"] = text_input(body.get("input", ""), "input")
        if body.get("dimensions") is not None:
            out["dimensions"] = body["dimensions"]
        return out
    if (body.get("n") or 1) != 1:
        raise refuse("n", "Ollama makes one answer per request; send n requests")
    forced = forced_functions(body) if operation == "chat" else []
    if operation == "chat":
        out["messages"] = messages_to_ollama(body.get("messages") or [])
        tools = tools_to_ollama(body)
        if tools and not forced:  # a forced call is the constrained answer itself
            out["tools"] = tools
    else:
        out["prompt"] = "".join(text_input(body.get("prompt", ""), "prompt"))
        out["raw"] = True  # /v1/completions continues the prompt as is, with no chat template
        if body.get("suffix"):
            out["suffix"] = body["suffix"]
    fields = cast(JsonObject, body)  # the copied fields go by their table (fields.OPENAI_TO_OLLAMA)
    options = {target: fields[name] for name, target in TO_OPTIONS.items() if fields.get(name) is not None}
    if options:
        out["options"] = options
    fmt = forced_format(forced) if forced else format_of(body.get("response_format"))
    if fmt is not None:
        out["format"] = fmt
    if body.get("reasoning_effort") is not None:
        out["think"] = body["reasoning_effort"] if body["reasoning_effort"] in ("low", "medium", "high") else True
    logprobs = body.get("logprobs")
    if operation == "chat" and logprobs:
        out["logprobs"] = True
        if body.get("top_logprobs") is not None:
            out["top_logprobs"] = body["top_logprobs"]
    elif operation == "complete" and logprobs is not None:
        out["logprobs"], out["top_logprobs"] = True, logprobs
    out["stream"] = wants_stream("openai", operation, body)
    return out


def text_input(value: object, field: str) -> list[str] | str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return cast(list[str], value)  # each item is a string (just checked)
    raise refuse(field, "token ids have no Ollama counterpart; send text")


def tools_to_ollama(body: OpenAIRequest) -> list[JsonObject]:
    choice = body.get("tool_choice")
    if choice == "none":
        return []  # no tool may be called: the same as offering none
    if isinstance(choice, dict) and not forced_functions(body):
        name = (choice.get("function") or {}).get("name")
        raise refuse("tool_choice", f"it names the function {name!r}, which is not among the tools offered")
    return [cast(JsonObject, tool) for tool in body.get("tools") or []]  # Ollama takes OpenAI's tool shape


def format_of(response_format: JsonObject | None) -> JsonValue:
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return "json"
    if kind == "json_schema":
        json_schema = response_format.get("json_schema")
        schema = json_schema.get("schema") if isinstance(json_schema, dict) else None
        if not isinstance(schema, dict):
            raise refuse("response_format.json_schema.schema", "a json_schema format needs its schema object")
        return schema
    return None


def messages_to_ollama(messages: list[OpenAIMessage]) -> list[OllamaMessage]:
    names = names_by_id(messages)
    out: list[OllamaMessage] = []
    for index, message in enumerate(messages):
        converted: OllamaMessage = {"role": message.get("role", "user")}
        text, images = content_to_ollama(message.get("content"), f"messages[{index}].content")
        converted["content"] = text
        if images:
            converted["images"] = images
        if message.get("tool_calls"):
            converted["tool_calls"] = openai_calls_to_ollama(message["tool_calls"], f"messages[{index}].tool_calls")
        if message.get("tool_call_id"):
            converted["tool_name"] = names.get(message["tool_call_id"], "")
        out.append(converted)
    return out


def content_to_ollama(content: str | list[JsonObject] | None, field: str) -> tuple[str, list[str]]:
    if not isinstance(content, list):
        return ("" if content is None else str(content)), []
    texts: list[str] = []
    images: list[str] = []
    for index, part in enumerate(content):
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "image_url":
            image = part.get("image_url")
            url = str(image.get("url", "")) if isinstance(image, dict) else str(image or "")
            images.append(base64_of(url, f"{field}[{index}].image_url"))
        else:
            raise refuse(f"{field}[{index}].type", f"content parts of type {kind!r} have no Ollama counterpart")
    return "".join(texts), images
