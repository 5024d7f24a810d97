"""Request bodies from one API's shape to the other's.

Only fields with a counterpart are mapped; the rest are dropped rather than
passed on where the other API would reject them.
"""

from __future__ import annotations

from typing import Any

from app.services.translate.shapes import Api, Operation, wants_stream

_OLLAMA_OPTION_TO_OPENAI = {
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "num_predict": "max_tokens",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
_OPENAI_TO_OLLAMA_OPTION = {v: k for k, v in _OLLAMA_OPTION_TO_OPENAI.items()}
_OPENAI_TO_OLLAMA_OPTION["max_completion_tokens"] = "num_predict"


def translate_request(
    source: Api, target: Api, operation: Operation, body: dict[str, Any], model: str
) -> dict[str, Any]:
    """Body for ``target``'s API with ``model`` as the upstream knows it."""
    if source == target:
        out = dict(body)
        out["model"] = model
        if target == "openai" and wants_stream(source, operation, body):
            # Ask for usage so the workload record gets token counts.
            options = dict(out.get("stream_options") or {})
            options["include_usage"] = True
            out["stream_options"] = options
        return out
    if source == "ollama":
        return _ollama_to_openai(operation, body, model)
    return _openai_to_ollama(operation, body, model)


def _ollama_to_openai(operation: Operation, body: dict[str, Any], model: str) -> dict[str, Any]:
    out: dict[str, Any] = {"model": model}
    if operation in ("embed", "embed_legacy"):
        out["input"] = body.get("input", body.get("prompt", ""))
        return out
    if operation == "chat":
        out["messages"] = [_ollama_message_to_openai(m) for m in body.get("messages") or []]
    else:
        prompt = body.get("prompt", "")
        if body.get("system"):
            prompt = f"{body['system']}\n\n{prompt}"
        out["prompt"] = prompt
    for key, target_key in _OLLAMA_OPTION_TO_OPENAI.items():
        options = body.get("options") or {}
        if key in options:
            out[target_key] = options[key]
    if body.get("format") == "json" and operation == "chat":
        out["response_format"] = {"type": "json_object"}
    if wants_stream("ollama", operation, body):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    else:
        out["stream"] = False
    return out


def _ollama_message_to_openai(message: dict[str, Any]) -> dict[str, Any]:
    return {"role": message.get("role", "user"), "content": message.get("content", "")}


def _openai_to_ollama(operation: Operation, body: dict[str, Any], model: str) -> dict[str, Any]:
    out: dict[str, Any] = {"model": model}
    if operation in ("embed", "embed_legacy"):
        out["input"] = body.get("input", "")
        return out
    if operation == "chat":
        out["messages"] = [
            {"role": m.get("role", "user"), "content": _text_of(m.get("content"))} for m in body.get("messages") or []
        ]
    else:
        prompt = body.get("prompt", "")
        out["prompt"] = prompt if isinstance(prompt, str) else "".join(map(str, prompt))
        out["raw"] = True
    options: dict[str, Any] = {}
    for key, target_key in _OPENAI_TO_OLLAMA_OPTION.items():
        if body.get(key) is not None:
            options[target_key] = body[key]
    if options:
        out["options"] = options
    fmt = (body.get("response_format") or {}).get("type")
    if fmt in ("json_object", "json_schema"):
        out["format"] = "json"
    out["stream"] = wants_stream("openai", operation, body)
    return out


def _text_of(content: Any) -> str:
    """OpenAI content may be a list of parts; Ollama wants a string."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
