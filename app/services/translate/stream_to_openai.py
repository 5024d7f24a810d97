"""Ollama NDJSON from an Ollama-API upstream as OpenAI SSE chunks.

Tool calls, which Ollama sends whole, go out as OpenAI deltas (index, id, name and the
arguments in one piece), with finish_reason "tool_calls". The usage chunk is sent only
when the caller asked for it (``stream_options.include_usage``)."""

from __future__ import annotations

import json
import time

from app.services.translate import logprobs
from app.services.translate.forced import answer_as_call, forced_functions
from app.services.translate.messages_out import ollama_calls_to_openai_deltas
from app.services.translate.responses import StreamTranslator, Usage, openai_usage, sse
from app.services.translate.shapes import Operation
from app.services.translate.tool_calls import call_id
from app.services.translate.wire import (
    OllamaAnswer,
    OpenAIAnswer,
    OpenAIChoice,
    OpenAILogprobs,
    OpenAIReply,
    OpenAIRequest,
    OpenAIUsage,
)


class OllamaToOpenAI(StreamTranslator):
    content_type = "text/event-stream"

    def __init__(self, operation: Operation, model: str, include_usage: bool,
                 client_body: OpenAIRequest | None = None) -> None:
        super().__init__()
        self.operation, self.model, self.include_usage = operation, model, include_usage
        client_body = client_body or {}
        # A forced call arrives as constrained text, gathered and sent as the call at the end;
        # parallel_tool_calls false keeps the first call.
        self._forced = forced_functions(client_body) if operation == "chat" else []
        self._forced_text: list[str] = []
        self._one_call = client_body.get("parallel_tool_calls") is False
        self._id = f"{'chatcmpl' if operation == 'chat' else 'cmpl'}-{time.time_ns():x}"
        self._created = int(time.time())
        self._sent_role = False
        self._calls = 0
        self._offset = 0

    def _chunk(self, choices: list[OpenAIChoice], usage: OpenAIUsage | None = None) -> bytes:
        obj: OpenAIAnswer = {
            "id": self._id,
            "object": "chat.completion.chunk" if self.operation == "chat" else "text_completion",
            "created": self._created,
            "model": self.model,
            "choices": choices,
        }
        if usage is not None:
            obj["usage"] = usage
        return sse(obj)

    def on_lines(self, lines: list[bytes]) -> bytes:
        out = bytearray()
        for line in lines:
            obj: OllamaAnswer = json.loads(line)
            if obj.get("error"):
                raise ValueError(str(obj["error"]))
            if self.operation == "chat" and not self._sent_role:
                self._sent_role = True
                out += self._chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
            out += self._content(obj)
            if obj.get("done") and self._forced and not self._calls:
                name, arguments = answer_as_call("".join(self._forced_text), self._forced)
                out += self._chunk([self._choice({"tool_calls": [{
                    "index": 0, "id": call_id(arguments, 0), "type": "function",
                    "function": {"name": name, "arguments": arguments}}]}, "", None, None)])
                self._calls = 1
            if obj.get("done"):
                self.finished_cleanly = True
                self.usage = Usage(obj.get("prompt_eval_count"), obj.get("eval_count"))
                finish = "tool_calls" if self._calls else (obj.get("done_reason") or "stop")
                out += self._chunk([self._choice({}, "", finish, None)])
                if self.include_usage:
                    out += self._chunk([], usage=openai_usage(self.usage))
                out += b"data: [DONE]\n\n"
        return bytes(out)

    def _content(self, obj: OllamaAnswer) -> bytes:
        message = obj.get("message") or {}
        text = message.get("content", "") if self.operation == "chat" else obj.get("response", "")
        delta: OpenAIReply = {}
        if text and self._forced:
            self._forced_text.append(text)
            text = ""
        if text:
            delta["content"] = text
        if message.get("thinking") or obj.get("thinking"):
            delta["reasoning_content"] = message.get("thinking") or obj.get("thinking")
        calls = message.get("tool_calls") or []
        if calls and self._one_call:
            calls = calls[:1] if not self._calls else []
        if calls:
            delta["tool_calls"] = ollama_calls_to_openai_deltas(calls, self._calls)
            self._calls += len(calls)
        items = obj.get("logprobs")
        if not delta and not items:
            return b""
        if self.operation == "chat":
            return self._chunk([self._choice(delta, text, None, logprobs.ollama_to_openai_chat(items))])
        legacy = logprobs.ollama_to_openai_legacy(items, self._offset)
        self._offset += len(text)
        return self._chunk([self._choice(delta, text, None, legacy)])

    def _choice(self, delta: OpenAIReply, text: str, finish: str | None, lp: OpenAILogprobs | None) -> OpenAIChoice:
        if self.operation == "chat":
            return {"index": 0, "delta": delta, "logprobs": lp, "finish_reason": finish}
        return {"index": 0, "text": text, "logprobs": lp, "finish_reason": finish}
