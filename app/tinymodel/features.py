"""What the tiny model does beyond text, the same way for both APIs: tool calls, JSON and
schema-constrained answers, reasoning, and log probabilities. Deterministic, so tests can
say exactly what a caller must get back."""

from __future__ import annotations

from typing import Any

THINKING = "the tiny model thinks it over"


def tool_to_call(tools: Any, last_role: str | None, forced: str | None = None) -> dict[str, Any] | None:
    """The call the model makes: when it was offered tools and the user spoke last (or a call is forced)."""
    if not isinstance(tools, list) or not tools:
        return None
    if forced is None and last_role != "user":
        return None
    functions = [t.get("function") or {} for t in tools if isinstance(t, dict)]
    chosen = next((f for f in functions if f.get("name") == forced), functions[0] if functions else {})
    return {"name": chosen.get("name", "tool"), "arguments": value_for(chosen.get("parameters") or {}, "tiny")}


def more_calls(tools: Any, first: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The first call and, up to ``count`` in all, one call of each further offered tool."""
    others = [t.get("function") or {} for t in tools if isinstance(t, dict)][1:] if isinstance(tools, list) else []
    return [first] + [{"name": f.get("name", "tool"), "arguments": value_for(f.get("parameters") or {}, "tiny")}
                      for f in others[:max(0, count - 1)]]


def value_for(schema: Any, word: str) -> Any:
    """A value that conforms to a (simple) JSON schema: objects, arrays, enums and scalar types."""
    if not isinstance(schema, dict):
        return word
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):  # the first alternative conforms
        if isinstance(schema.get(key), list) and schema[key]:
            return value_for(schema[key][0], word)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return {name: value_for(sub, word) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [value_for(schema.get("items") or {}, word)]
    return {"integer": 1, "number": 1.5, "boolean": True, "null": None}.get(str(kind), word)


def json_answer(fmt: Any, text: str) -> str | None:
    """The answer under a format: "json" -> an object; a schema -> an object that conforms to it."""
    import json

    word = text.split()[0] if text.split() else "tiny"
    if fmt in ("json", {"type": "json_object"}):
        return json.dumps({"answer": text})
    if isinstance(fmt, dict):
        return json.dumps(value_for(fmt, word))
    return None


def logprobs_of(tokens: list[str], top: int) -> list[dict[str, Any]]:
    """Ollama's shape: one entry per token, with ``top`` alternatives."""
    return [{"token": t, "logprob": -0.25 * (i % 4) - 0.01,
             "top_logprobs": [{"token": t, "logprob": -0.25 * (i % 4) - 0.01},
                              *({"token": f" alt{k}", "logprob": -3.0 - k} for k in range(1, top))][:top]}
            for i, t in enumerate(tokens)]
