"""SSE chunks from an OpenAI-API upstream as Ollama NDJSON.

Text and reasoning go out as they come; tool calls, which OpenAI streams as deltas
(an id and name, then argument pieces), are gathered and sent whole, as Ollama does.
Some OpenAI-compatible servers ignore ``stream_options.include_usage``; then the
number of content chunks stands in for the completion token count."""

from __future__ import annotations

import json
import time

from app.services.translate import logprobs
from app.services.translate.messages_out import ollama_done_reason
from app.services.translate.responses import StreamTranslator, Usage, ndjson, now_rfc3339, ollama_done_fields
from app.services.translate.shapes import Operation
from app.services.translate.tool_calls import answer_arguments
from app.services.translate.wire import OllamaAnswer, OpenAIAnswer, OpenAIChoice


class OpenAIToOllama(StreamTranslator):
    def __init__(self, operation: Operation, model: str) -> None:
        super().__init__()
        self._pieces = 0
        self.operation, self.model = operation, model
        self._finish_reason: str | None = None
        self._calls: dict[int, dict[str, str]] = {}  # index -> the name and arguments gathered
        self._started = time.monotonic_ns()

    def on_lines(self, lines: list[bytes]) -> bytes:
        out = bytearray()
        for line in lines:
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                out += self._final()  # raises for an answer that cannot be translated: not a clean end
                self.finished_cleanly = True
                continue
            obj: OpenAIAnswer = json.loads(payload)
            u = obj.get("usage")
            if u:
                self.usage = Usage(u.get("prompt_tokens"), u.get("completion_tokens"))
            for choice in obj.get("choices") or []:
                out += self._choice(choice)
        return bytes(out)

    def _choice(self, choice: OpenAIChoice) -> bytes:
        if choice.get("finish_reason"):
            self._finish_reason = choice["finish_reason"]
        delta = choice.get("delta") or {}
        for call in delta.get("tool_calls") or []:
            gathered = self._calls.setdefault(call.get("index", len(self._calls)), {"name": "", "arguments": ""})
            function = call.get("function") or {}
            gathered["name"] += function.get("name") or ""
            gathered["arguments"] += function.get("arguments") or ""
        if self.operation == "chat":
            text = delta.get("content") or delta.get("refusal") or ""
            thinking = delta.get("reasoning_content") or delta.get("reasoning") or ""
        else:
            text, thinking = choice.get("text") or "", ""
        piece_logprobs = logprobs.openai_to_ollama(choice.get("logprobs"))
        if not text and not thinking and not piece_logprobs:
            return b""
        self._pieces += 1
        piece = self._piece(text, done=False)
        if thinking:
            piece["message"]["thinking"] = thinking
        if piece_logprobs:
            piece["logprobs"] = piece_logprobs
        return ndjson(piece)

    def _piece(self, text: str, *, done: bool) -> OllamaAnswer:
        base: OllamaAnswer = {"model": self.model, "created_at": now_rfc3339()}
        if self.operation == "chat":
            base["message"] = {"role": "assistant", "content": text}
        else:
            base["response"] = text
        base["done"] = done
        return base

    def _final(self) -> bytes:
        out = b""
        if self._calls:
            piece = self._piece("", done=False)
            piece["message"]["tool_calls"] = [
                {"function": {"name": c["name"], "arguments": answer_arguments(c["arguments"])}}
                for _, c in sorted(self._calls.items())]
            out += ndjson(piece)
        if self.usage.completion_tokens is None:
            self.usage.completion_tokens = self._pieces
        final = self._piece("", done=True)
        final.update(ollama_done_fields(ollama_done_reason(self._finish_reason), self.usage, self._started))
        return out + ndjson(final)
