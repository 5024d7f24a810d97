"""The OpenAI Responses event stream, written from a Chat Completions stream's events.

The sequence is OpenAI's: ``response.created``, ``response.in_progress``; per output item
``response.output_item.added``, its deltas (``response.output_text.delta`` inside a content part,
``response.reasoning_text.delta``, ``response.function_call_arguments.delta``), their ``.done``
events and ``response.output_item.done``; then ``response.completed`` (``response.incomplete``
when the token budget ended it) carrying the whole response and its usage. Each event carries its
``sequence_number``."""

from __future__ import annotations

import json
from collections.abc import Callable

from app.services.json_types import JsonObject
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
from app.services.translate.resp_answer import (
    call_item,
    message_item,
    new_id,
    reasoning_item,
    response_object,
)
from app.services.translate.wire import ResponsesItem, ResponsesObject, ResponsesPart, ResponsesRequest


class ResponsesWriter:
    content_type = "text/event-stream"

    def __init__(self, body: ResponsesRequest, response_id: str,
                 on_complete: Callable[[ResponsesObject], None] | None = None) -> None:
        self.body, self.response_id, self._on_complete = body, response_id, on_complete
        self._seq = 0
        self.output: list[ResponsesItem] = []
        self._open: ResponsesItem | None = None  # the reasoning or message item being written
        self._open_text: list[str] = []
        self._calls: dict[int, tuple[ResponsesItem, list[str]]] = {}
        self._finish = "stop"
        self.finished = False

    def _event(self, kind: str, **fields: object) -> bytes:
        obj = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return f"event: {kind}\ndata: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()

    def start(self) -> bytes:
        shell = response_object(self.response_id, self.body, [], "in_progress", None)
        return self._event("response.created", response=shell) + self._event("response.in_progress", response=shell)

    def write(self, events: list[ChatEvent]) -> bytes:
        out = bytearray()
        for event in events:
            if isinstance(event, Text | Reasoning):
                out += self._text(event)
            elif isinstance(event, CallStart):
                out += self._close_open()
                item = call_item(new_id("fc"), event.call_id, event.name, "", status="in_progress")
                self._calls[event.index] = (item, [])
                self.output.append(item)
                out += self._event("response.output_item.added", output_index=len(self.output) - 1, item=item)
            elif isinstance(event, CallArguments) and event.index in self._calls:
                item, pieces = self._calls[event.index]
                pieces.append(event.text)
                out += self._event("response.function_call_arguments.delta", item_id=item["id"],
                                   output_index=self.output.index(item), delta=event.text)
            elif isinstance(event, Finish):
                self._finish = event.reason
            elif isinstance(event, End):
                out += self._end(event)
            elif isinstance(event, Failed):
                out += self.failed(event.message)
        return bytes(out)

    def _text(self, event: Text | Reasoning) -> bytes:
        kind = "reasoning" if isinstance(event, Reasoning) else "message"
        out = bytearray()
        if self._open is None or self._open["type"] != kind:
            out += self._close_open()
            item = reasoning_item(new_id("rs"), "") if kind == "reasoning" else message_item(new_id("msg"), "",
                                                                                                 "in_progress")
            self._open, self._open_text = item, []
            self.output.append(item)
            index = len(self.output) - 1
            out += self._event("response.output_item.added", output_index=index, item=item)
            part: ResponsesPart = ({"type": "reasoning_text", "text": ""} if kind == "reasoning" else
                    {"type": "output_text", "text": "", "annotations": [], "logprobs": []})
            out += self._event("response.content_part.added", item_id=item["id"], output_index=index,
                               content_index=0, part=part)
        self._open_text.append(event.text)
        delta_kind = "response.reasoning_text.delta" if kind == "reasoning" else "response.output_text.delta"
        extra: JsonObject = {} if kind == "reasoning" else {"logprobs": []}
        out += self._event(delta_kind, item_id=self._open["id"], output_index=self.output.index(self._open),
                           content_index=0, delta=event.text, **extra)
        return bytes(out)

    def _close_open(self) -> bytes:
        item = self._open
        if item is None:
            return b""
        self._open = None
        text = "".join(self._open_text)
        index = self.output.index(item)
        if item["type"] == "reasoning":
            done = reasoning_item(item["id"], text)
            part: ResponsesPart = done["content"][0] if done["content"] else {"type": "reasoning_text", "text": ""}
            out = self._event("response.reasoning_text.done", item_id=item["id"], output_index=index,
                              content_index=0, text=text)
        else:
            done = message_item(item["id"], text)
            part = done["content"][0]
            out = self._event("response.output_text.done", item_id=item["id"], output_index=index,
                              content_index=0, text=text, logprobs=[])
        self.output[index] = done
        out += self._event("response.content_part.done", item_id=item["id"], output_index=index,
                           content_index=0, part=part)
        return out + self._event("response.output_item.done", output_index=index, item=done)

    def _close_calls(self) -> bytes:
        out = bytearray()
        for item, pieces in self._calls.values():
            index = self.output.index(item)
            arguments = "".join(pieces) or "{}"
            done = call_item(item["id"], item["call_id"], item["name"], arguments)
            self.output[index] = done
            out += self._event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                               arguments=arguments)
            out += self._event("response.output_item.done", output_index=index, item=done)
        self._calls = {}
        return bytes(out)

    def _end(self, event: End) -> bytes:
        out = self._close_open() + self._close_calls()
        status = "incomplete" if self._finish == "length" else "completed"
        response = response_object(self.response_id, self.body, self.output, status, event.usage)
        self.finished = True
        if self._on_complete is not None:
            self._on_complete(response)
        return out + self._event(f"response.{status}", response=response)

    def failed(self, message: str) -> bytes:
        if self.finished:
            return b""
        self.finished = True
        response = response_object(self.response_id, self.body, self.output, "failed", None)
        response["error"] = {"code": "server_error", "message": message}
        return self._event("response.failed", response=response)
