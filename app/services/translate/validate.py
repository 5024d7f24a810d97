"""Request bodies checked against each API's schema before a job is opened.

Only the types of the fields Pairwise reads or translates are checked (unknown fields are
left to the engine or to translation, which refuses what cannot cross). A wrong type is
a 400 that names the field by its path, e.g. ``messages[2].content``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from app.services.errors import PairwiseError
from app.services.translate.shapes import Api, Operation


class InvalidRequest(PairwiseError):
    """A request field of the wrong type or value; ``field`` is its path in the body."""

    title = "Invalid request"
    status = 400

    def __init__(self, field: str, expected: str) -> None:
        message = f"the request has no '{field}'" if expected == "present" else f"'{field}' must be {expected}"
        super().__init__(f"invalid request: {message}")
        self.field = field


Check = Callable[[Any, str], None]


def _kind(expected: str, test: Callable[[Any], bool]) -> Check:
    def check(value: Any, path: str) -> None:
        if not test(value):
            raise InvalidRequest(path, expected)
    return check


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


STRING = _kind("a string", lambda v: isinstance(v, str))
BOOL = _kind("true or false", lambda v: isinstance(v, bool))
INT = _kind("an integer", _is_int)
NUMBER = _kind("a number", _is_number)
OBJECT = _kind("an object", lambda v: isinstance(v, dict))
NULL_OR_STRING = _kind("a string or null", lambda v: v is None or isinstance(v, str))


class ListOf:
    def __init__(self, item: Check, what: str) -> None:
        self.item, self.what = item, what

    def __call__(self, value: Any, path: str) -> None:
        if not isinstance(value, list):
            raise InvalidRequest(path, f"a list of {self.what}")
        for index, element in enumerate(value):
            self.item(element, f"{path}[{index}]")


list_of = ListOf


def one_of(expected: str, *checks: Check) -> Check:
    def check(value: Any, path: str) -> None:
        for candidate in checks:
            try:
                candidate(value, path)
                return
            except InvalidRequest:
                continue
        raise InvalidRequest(path, expected)
    return check


class Fields:
    """An object whose listed fields, when present and not null, pass their checks."""

    def __init__(self, spec: dict[str, Check], required: tuple[str, ...] = ()) -> None:
        self.spec, self.required = spec, required

    def __call__(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise InvalidRequest(path or "body", "an object")
        prefix = f"{path}." if path else ""
        for name in self.required:
            if value.get(name) is None:
                raise InvalidRequest(prefix + name, "present")
        for name, field_check in self.spec.items():
            if value.get(name) is not None:
                field_check(value[name], prefix + name)


fields = Fields


def _model(value: Any, path: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest(path, "a model name (a non-empty string)")


STOP = one_of("a string or a list of strings", STRING, list_of(STRING, "strings"))
TOOL = fields({"type": STRING, "function": fields({"name": STRING, "description": STRING,
                                                    "parameters": OBJECT}, required=("name",))})
TOOLS = list_of(TOOL, "tool objects")
STRINGS = list_of(STRING, "strings")
INTS = list_of(INT, "integers")

# Ollama: https://github.com/ollama/ollama/blob/main/docs/api.md
OLLAMA_OPTIONS = fields({
    "temperature": NUMBER, "top_p": NUMBER, "top_k": INT, "min_p": NUMBER, "seed": INT, "stop": STOP,
    "num_predict": INT, "num_ctx": INT, "presence_penalty": NUMBER, "frequency_penalty": NUMBER,
    "repeat_penalty": NUMBER,
})
OLLAMA_TOOL_CALL = fields({"function": fields({"name": STRING, "arguments": OBJECT}, required=("name",))},
                          required=("function",))
OLLAMA_MESSAGE = fields({
    "role": STRING, "content": NULL_OR_STRING, "images": STRINGS, "thinking": STRING,
    "tool_calls": list_of(OLLAMA_TOOL_CALL, "tool call objects"), "tool_name": STRING,
}, required=("role",))
OLLAMA_FORMAT = one_of("\"json\" or a JSON schema object", _kind("\"json\"", lambda v: v in ("json", "")), OBJECT)
THINK = one_of("true, false, \"low\", \"medium\" or \"high\"", BOOL,
               _kind("a level", lambda v: v in ("low", "medium", "high")))
KEEP_ALIVE = one_of("a duration (\"5m\") or a number of seconds", STRING, NUMBER)
OLLAMA_COMMON: dict[str, Check] = {"model": _model, "stream": BOOL, "options": OLLAMA_OPTIONS, "keep_alive": KEEP_ALIVE}

OLLAMA: dict[Operation, Fields] = {
    "chat": fields({**OLLAMA_COMMON, "messages": list_of(OLLAMA_MESSAGE, "message objects"), "tools": TOOLS,
                    "format": OLLAMA_FORMAT, "think": THINK, "logprobs": BOOL, "top_logprobs": INT},
                   required=("model",)),
    "complete": fields({**OLLAMA_COMMON, "prompt": STRING, "suffix": STRING, "system": STRING, "raw": BOOL,
                        "images": STRINGS, "format": OLLAMA_FORMAT, "think": THINK, "context": INTS,
                        "logprobs": BOOL, "top_logprobs": INT},
                       required=("model",)),
    "embed": fields({**OLLAMA_COMMON, "input": one_of("a string or a list of strings", STRING, STRINGS),
                     "truncate": BOOL, "dimensions": INT}, required=("model",)),
    "embed_legacy": fields({**OLLAMA_COMMON, "prompt": STRING}, required=("model",)),
}

# OpenAI: https://platform.openai.com/docs/api-reference
CONTENT_PART = fields({"type": STRING, "text": STRING, "image_url": one_of(
    "an object with a 'url' (or a URL string)", STRING, fields({"url": STRING}, required=("url",)))},
    required=("type",))
OPENAI_CONTENT = one_of("a string, a list of content parts or null", NULL_OR_STRING,
                        list_of(CONTENT_PART, "content part objects"))
OPENAI_TOOL_CALL = fields({"id": STRING, "type": STRING,
                           "function": fields({"name": STRING, "arguments": STRING}, required=("name",))},
                          required=("function",))
OPENAI_MESSAGE = fields({"role": STRING, "content": OPENAI_CONTENT, "name": STRING, "tool_call_id": STRING,
                         "tool_calls": list_of(OPENAI_TOOL_CALL, "tool call objects")}, required=("role",))
RESPONSE_FORMAT = fields({"type": _kind("\"text\", \"json_object\" or \"json_schema\"",
                                        lambda v: v in ("text", "json_object", "json_schema")),
                          "json_schema": fields({"name": STRING, "schema": OBJECT, "strict": BOOL})},
                         required=("type",))
TOOL_CHOICE = one_of("\"none\", \"auto\", \"required\" or a tool object",
                     _kind("a choice", lambda v: v in ("none", "auto", "required")),
                     fields({"type": STRING, "function": fields({"name": STRING}, required=("name",))}))
PROMPT = one_of("a string, a list of strings or a list of token ids", STRING, STRINGS, INTS,
                list_of(INTS, "lists of token ids"))
OPENAI_SAMPLING: dict[str, Check] = {
    "model": _model, "stream": BOOL, "stream_options": fields({"include_usage": BOOL}), "temperature": NUMBER,
    "top_p": NUMBER, "seed": INT, "stop": STOP, "n": INT, "max_tokens": INT, "presence_penalty": NUMBER,
    "frequency_penalty": NUMBER, "user": STRING,
}

OPENAI: dict[Operation, Fields] = {
    "chat": fields({**OPENAI_SAMPLING, "messages": list_of(OPENAI_MESSAGE, "message objects"), "tools": TOOLS,
                    "tool_choice": TOOL_CHOICE, "response_format": RESPONSE_FORMAT, "logprobs": BOOL,
                    "top_logprobs": INT, "max_completion_tokens": INT, "parallel_tool_calls": BOOL,
                    "reasoning_effort": STRING}, required=("model", "messages")),
    "complete": fields({**OPENAI_SAMPLING, "prompt": PROMPT, "suffix": STRING, "logprobs": INT, "echo": BOOL},
                       required=("model",)),
    "embed": fields({"model": _model, "input": PROMPT, "dimensions": INT, "user": STRING,
                     "encoding_format": _kind("\"float\" or \"base64\"", lambda v: v in ("float", "base64"))},
                    required=("model", "input")),
}
OPENAI["embed_legacy"] = OPENAI["embed"]


def refuse_non_finite(value: Any, path: str) -> None:
    """NaN and Infinity are not JSON (Python's parser takes them; Ollama's and OpenAI's refuse them)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidRequest(path or "body", "a finite number (NaN and Infinity are not JSON)")
    if isinstance(value, dict):
        for name, item in value.items():
            refuse_non_finite(item, f"{path}.{name}" if path else str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            refuse_non_finite(item, f"{path}[{index}]")


def validate_request(api: Api, operation: Operation, body: dict[str, Any]) -> None:
    """Raises InvalidRequest naming the first field of the wrong type."""
    (OLLAMA if api == "ollama" else OPENAI)[operation](body, "")
    refuse_non_finite(body, "")
