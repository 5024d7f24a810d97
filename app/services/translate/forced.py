"""A forced tool call (OpenAI ``tool_choice`` "required" or a named function) for an engine that
cannot force one (Ollama): the answer is constrained to the tool's parameter schema with Ollama's
``format``, and the constrained answer comes back as the call. With several tools to choose from,
the schema is ``{"name": one of them, "arguments": its parameters}``."""

from __future__ import annotations

import json

from app.services.errors import UpstreamError
from app.services.json_types import JsonObject
from app.services.translate.wire import OpenAIFunction, OpenAIRequest

OBJECT: JsonObject = {"type": "object"}


def _functions(body: OpenAIRequest) -> list[OpenAIFunction]:
    return [t.get("function") or {} for t in body.get("tools") or [] if isinstance(t, dict)]


def forced_functions(body: OpenAIRequest) -> list[OpenAIFunction]:
    """The functions one of which the answer must call; empty when no call is forced."""
    choice = body.get("tool_choice")
    functions = _functions(body)
    if choice == "required":
        return functions
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        return [f for f in functions if f.get("name") == name]
    return []


def forced_format(functions: list[OpenAIFunction]) -> JsonObject:
    if len(functions) == 1:
        return functions[0].get("parameters") or OBJECT
    return {"type": "object", "required": ["name", "arguments"], "properties": {
        "name": {"type": "string", "enum": [f.get("name", "") for f in functions]},
        "arguments": {"anyOf": [f.get("parameters") or OBJECT for f in functions]}}}


def answer_as_call(text: str, functions: list[OpenAIFunction]) -> tuple[str, str]:
    """The constrained answer as (function name, JSON arguments)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UpstreamError("the engine's constrained tool call is not JSON (its token budget ran out?)") from exc
    if len(functions) == 1:
        name, arguments = functions[0].get("name", ""), value
    elif isinstance(value, dict):
        name, arguments = str(value.get("name", "")), value.get("arguments")
    else:
        raise UpstreamError("the engine's constrained tool call is not an object")
    if not isinstance(arguments, dict):
        raise UpstreamError("the engine's constrained tool call arguments are not an object")
    return name, json.dumps(arguments)
