"""A Chat Completions SSE stream read as the events another dialect is written from: text and
reasoning deltas, tool calls (start and argument pieces), the finish reason, usage, the end, or
an error line. The Responses and Anthropic stream writers consume these."""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.services.translate.lines import LineBuffer
from app.services.translate.responses import Usage
from app.services.translate.wire import OpenAIAnswer, OpenAIReply


@dataclass
class Text:
    text: str


@dataclass
class Reasoning:
    text: str


@dataclass
class CallStart:
    index: int
    call_id: str
    name: str


@dataclass
class CallArguments:
    index: int
    text: str


@dataclass
class Finish:
    reason: str


@dataclass
class End:
    usage: Usage


@dataclass
class Failed:
    message: str


ChatEvent = Text | Reasoning | CallStart | CallArguments | Finish | End | Failed


class ChatStreamReader:
    def __init__(self) -> None:
        self._lines = LineBuffer()
        self._usage = Usage()
        self._started: set[int] = set()
        self.ended = False

    def feed(self, chunk: bytes) -> list[ChatEvent]:
        return [event for line in self._lines.feed(chunk) for event in self._line(line)]

    def finish(self) -> list[ChatEvent]:
        rest = self._lines.rest()
        return self._line(rest) if rest else []

    def _line(self, line: bytes) -> list[ChatEvent]:
        line = line.strip()
        if not line.startswith(b"data:"):
            return []
        payload = line[5:].strip()
        if payload == b"[DONE]":
            self.ended = True
            return [End(self._usage)]
        obj: OpenAIAnswer = json.loads(payload)
        if obj.get("error"):
            error = obj["error"]
            return [Failed(str(error.get("message") if isinstance(error, dict) else error))]
        usage = obj.get("usage")
        if usage:
            self._usage = Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
        events: list[ChatEvent] = []
        for choice in obj.get("choices") or []:
            events += self._delta(choice.get("delta") or {})
            finish = choice.get("finish_reason")
            if finish:
                events.append(Finish(finish))
        return events

    def _delta(self, delta: OpenAIReply) -> list[ChatEvent]:
        events: list[ChatEvent] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            events.append(Reasoning(reasoning))
        content = delta.get("content")
        if content:
            events.append(Text(content))
        for call in delta.get("tool_calls") or []:
            index = int(call.get("index") or 0)
            function = call.get("function") or {}
            if index not in self._started:
                self._started.add(index)
                events.append(CallStart(index, call.get("id") or f"call_{index}", function.get("name") or ""))
            if function.get("arguments"):
                events.append(CallArguments(index, function["arguments"]))
        return events
