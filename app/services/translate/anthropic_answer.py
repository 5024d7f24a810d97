"""A Chat Completions answer (whole or streamed) in Anthropic Messages' shape, and errors in its shape."""

from __future__ import annotations

import json
import uuid

from app.services.json_types import JsonArray, JsonObject
from app.services.translate.chat_events import (
    CallArguments,
    CallStart,
    ChatEvent,
    End,
    Failed,
    Finish,
    Reasoning,
    Text,
)
from app.services.translate.responses import Usage
from app.services.translate.wire import OpenAIAnswer, OpenAIChoice, OpenAIReply

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error",
               529: "overloaded_error"}


def error_body(status: int, message: str) -> JsonObject:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def new_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def usage_of(usage: Usage) -> JsonObject:
    return {"input_tokens": usage.prompt_tokens or 0, "output_tokens": usage.completion_tokens or 0,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def arguments_input(arguments: str) -> JsonObject:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def chat_to_message(chat: OpenAIAnswer, model: str) -> JsonObject:
    choice: OpenAIChoice = (chat.get("choices") or [{}])[0]
    message: OpenAIReply = choice.get("message") or {}
    content: JsonArray = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        content.append({"type": "thinking", "thinking": reasoning, "signature": ""})
    text = message.get("content")
    if text:
        content.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        content.append({"type": "tool_use", "id": call.get("id") or f"toolu_{uuid.uuid4().hex[:24]}",
                        "name": function.get("name", ""), "input": arguments_input(function.get("arguments", ""))})
    usage = chat.get("usage") or {}
    return {"id": new_id(), "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": STOP_REASONS.get(choice.get("finish_reason") or "stop", "end_turn"),
            "stop_sequence": None, "usage": usage_of(Usage(usage.get("prompt_tokens"), usage.get("completion_tokens")))}


class AnthropicWriter:
    """``message_start``, ``content_block_start``/``_delta``/``_stop`` per block (thinking, text,
    tool_use), ``message_delta`` with the stop reason and usage, ``message_stop``."""

    content_type = "text/event-stream"

    def __init__(self, model: str) -> None:
        self.model = model
        self._index = -1
        self._open: str | None = None  # "thinking", "text" or "tool:<n>"
        self._stop = "end_turn"
        self._called = False
        self.finished = False

    @staticmethod
    def _event(kind: str, **fields: object) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields}, separators=(',', ':'))}\n\n".encode()

    def start(self) -> bytes:
        message: JsonObject = {"id": new_id(), "type": "message", "role": "assistant", "model": self.model, "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": usage_of(Usage(0, 0))}
        return self._event("message_start", message=message) + self._event("ping")

    def _block(self, key: str, block: JsonObject) -> bytes:
        if self._open == key:
            return b""
        out = self._close()
        self._index += 1
        self._open = key
        return out + self._event("content_block_start", index=self._index, content_block=block)

    def _close(self) -> bytes:
        if self._open is None:
            return b""
        out = b""
        if self._open == "thinking":
            out = self._event("content_block_delta", index=self._index,
                              delta={"type": "signature_delta", "signature": ""})
        self._open = None
        return out + self._event("content_block_stop", index=self._index)

    def write(self, events: list[ChatEvent]) -> bytes:
        out = bytearray()

        def delta(fields: JsonObject) -> bytes:
            return self._event("content_block_delta", index=self._index, delta=fields)

        for event in events:
            if isinstance(event, Reasoning):
                out += self._block("thinking", {"type": "thinking", "thinking": "", "signature": ""})
                out += delta({"type": "thinking_delta", "thinking": event.text})
            elif isinstance(event, Text):
                out += self._block("text", {"type": "text", "text": ""})
                out += delta({"type": "text_delta", "text": event.text})
            elif isinstance(event, CallStart):
                self._called = True
                out += self._block(f"tool:{event.index}", {"type": "tool_use", "id": event.call_id,
                                                           "name": event.name, "input": {}})
            elif isinstance(event, CallArguments) and self._open == f"tool:{event.index}":
                out += delta({"type": "input_json_delta", "partial_json": event.text})
            elif isinstance(event, Finish):
                self._stop = STOP_REASONS.get(event.reason, "end_turn")
            elif isinstance(event, End):
                stop = "tool_use" if self._called and self._stop == "end_turn" else self._stop
                out += self._close()
                out += self._event("message_delta", delta={"stop_reason": stop, "stop_sequence": None},
                                   usage=usage_of(event.usage))
                out += self._event("message_stop")
                self.finished = True
            elif isinstance(event, Failed):
                out += self.failed(event.message)
        return bytes(out)

    def failed(self, message: str) -> bytes:
        if self.finished:
            return b""
        self.finished = True
        return self._event("error", error={"type": "api_error", "message": message})
