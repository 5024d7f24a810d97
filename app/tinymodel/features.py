"""What the tiny model does beyond text, the same way for both APIs: tool calls, JSON and
schema-constrained answers, reasoning, and log probabilities. Deterministic, so tests can
say exactly what a caller must get back."""

from __future__ import annotations

from app.services.json_types import JsonObject, JsonValue
from app.services.translate.wire import OllamaFunctionCall, OllamaLogprob

THINKING = "the tiny model thinks it over"


def tool_to_call(tools: JsonValue, last_role: str | None, forced: str | None = None) -> OllamaFunctionCall | None:
    """The call the model makes: when it was offered tools and the user spoke last (or a call is forced)."""
    if not isinstance(tools, list) or not tools:
        return None
    if forced is None and last_role != "user":
        return None
    functions = _functions(tools)
    chosen = next((f for f in functions if f.get("name") == forced), functions[0] if functions else {})
    return _call(chosen)


def _functions(tools: JsonValue) -> list[JsonObject]:
    """The offered tools' functions (an entry that is no object offers an empty one)."""
    listed = [t.get("function") or {} for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    return [f if isinstance(f, dict) else {} for f in listed]


def _call(function: JsonObject) -> OllamaFunctionCall:
    arguments = value_for(function.get("parameters") or {}, "tiny")
    return {"name": str(function.get("name", "tool")), "arguments": arguments if isinstance(arguments, dict) else {}}


def more_calls(tools: JsonValue, first: OllamaFunctionCall, count: int) -> list[OllamaFunctionCall]:
    """The first call and, up to ``count`` in all, one call of each further offered tool."""
    others = _functions(tools)[1:]
    return [first] + [_call(f) for f in others[:max(0, count - 1)]]


def value_for(schema: JsonValue, word: str) -> JsonValue:
    """A value that conforms to a (simple) JSON schema: objects, arrays, enums and scalar types."""
    if not isinstance(schema, dict):
        return word
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf"):  # the first alternative conforms
        alternatives = schema.get(key)
        if isinstance(alternatives, list) and alternatives:
            return value_for(alternatives[0], word)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties")
        return {name: value_for(sub, word) for name, sub in (properties.items() if isinstance(properties, dict) else ())}
    if kind == "array":
        return [value_for(schema.get("items") or {}, word)]
    return {"integer": 1, "number": 1.5, "boolean": True, "null": None}.get(str(kind), word)


def json_answer(fmt: JsonValue, text: str) -> str | None:
    """The answer under a format: "json" -> an object; a schema -> an object that conforms to it."""
    import json

    word = text.split()[0] if text.split() else "tiny"
    if fmt in ("json", {"type": "json_object"}):
        return json.dumps({"answer": text})
    if isinstance(fmt, dict):
        return json.dumps(value_for(fmt, word))
    return None


def logprobs_of(tokens: list[str], top: int) -> list[OllamaLogprob]:
    """Ollama's shape: one entry per token, with ``top`` alternatives."""
    def alternatives(token: str, logprob: float) -> list[OllamaLogprob]:
        others: list[OllamaLogprob] = [{"token": f" alt{k}", "logprob": -3.0 - k} for k in range(1, top)]
        first: OllamaLogprob = {"token": token, "logprob": logprob}
        return [first, *others][:top]

    return [{"token": t, "logprob": -0.25 * (i % 4) - 0.01, "top_logprobs": alternatives(t, -0.25 * (i % 4) - 0.01)}
            for i, t in enumerate(tokens)]
