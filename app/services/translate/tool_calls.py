"""Tool calls between Ollama's shape (arguments as an object, no ids) and OpenAI's
(arguments as a JSON string, each call with an id that its tool result names)."""

from __future__ import annotations

import hashlib
import json

from app.services.errors import UpstreamError
from app.services.json_types import JsonObject
from app.services.translate.refusal import Untranslatable
from app.services.translate.wire import OllamaToolCall, OpenAIMessage, OpenAIToolCall


def call_id(seed: str, index: int) -> str:
    """A stable id for an Ollama call: the same history gives the same ids on every turn."""
    return "call_" + hashlib.sha256(f"{index}:{seed}".encode()).hexdigest()[:24]


def ollama_calls_to_openai(calls: list[OllamaToolCall], seed: str) -> list[OpenAIToolCall]:
    out: list[OpenAIToolCall] = []
    for index, call in enumerate(calls):
        function = call.get("function") or {}
        out.append({"id": call.get("id") or call_id(seed, index), "type": "function",
                    "function": {"name": function.get("name", ""),
                                 "arguments": json.dumps(function.get("arguments") or {})}})
    return out


def arguments_object(arguments: object, field: str) -> JsonObject:
    """OpenAI's JSON-string arguments as the object Ollama carries."""
    if isinstance(arguments, dict):
        return arguments
    text = arguments or "{}"
    if not isinstance(text, str | bytes | bytearray):
        raise Untranslatable(field, "ollama", "tool call arguments must be a JSON object")
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise Untranslatable(field, "ollama", "tool call arguments must be a JSON object") from exc
    if not isinstance(parsed, dict):
        raise Untranslatable(field, "ollama", "tool call arguments must be a JSON object")
    return parsed


def answer_arguments(arguments: object) -> JsonObject:
    """An engine's tool call arguments (a JSON string) as the object Ollama carries; an engine
    that sent something else broke its answer (UpstreamError), the caller did nothing wrong."""
    try:
        return arguments_object(arguments, "tool_calls.function.arguments")
    except Untranslatable as exc:
        raise UpstreamError("the engine answered a tool call whose arguments are not a JSON object") from exc


def openai_calls_to_ollama(calls: list[OpenAIToolCall], field: str) -> list[OllamaToolCall]:
    return [{"function": {"name": (call.get("function") or {}).get("name", ""),
                          "arguments": arguments_object((call.get("function") or {}).get("arguments"),
                                                        f"{field}[{index}].function.arguments")}}
            for index, call in enumerate(calls)]


class ToolCallIds:
    """Pairs Ollama tool results (named by tool) with the ids of the calls they answer, in order."""

    def __init__(self) -> None:
        self._open: list[tuple[str, str]] = []  # (id, name) of calls not answered yet

    def called(self, calls: list[OpenAIToolCall]) -> None:
        self._open = [(c["id"], c["function"]["name"]) for c in calls]

    def answer(self, tool_name: str | None) -> str:
        for position, (_, name) in enumerate(self._open):
            if tool_name is None or name == tool_name:
                return self._open.pop(position)[0]
        return call_id(tool_name or "tool", 0)


def names_by_id(messages: list[OpenAIMessage]) -> dict[str, str]:
    """OpenAI call id -> function name, from the assistant turns of a history."""
    return {call.get("id", ""): (call.get("function") or {}).get("name", "")
            for message in messages if isinstance(message, dict)
            for call in message.get("tool_calls") or [] if isinstance(call, dict)}
