"""Responses from an upstream's API shape to the caller's, streamed or whole.

A stream translator is fed raw upstream bytes and returns bytes for the caller.
Every translator also reads token usage, which the workload record keeps. The
pass-through case stays cheap: it forwards bytes untouched and parses only the
lines that can carry usage.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.services.translate.lines import LineBuffer
from app.services.translate.shapes import Api, Operation


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _now_rfc3339() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _ndjson(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


class StreamTranslator:
    content_type = "application/x-ndjson"

    def __init__(self) -> None:
        self.usage = Usage()
        self.finished_cleanly = False
        self._splitter = LineBuffer()

    def feed(self, chunk: bytes) -> bytes:
        return self.on_lines(self._splitter.feed(chunk))

    def on_lines(self, lines: list[bytes]) -> bytes:
        raise NotImplementedError

    def finish(self) -> bytes:
        """What the caller gets from a last line the upstream did not end with a newline."""
        rest = self._splitter.rest()
        return self.on_lines([rest]) if rest else b""


class PassThrough(StreamTranslator):
    def __init__(self, api: Api) -> None:
        super().__init__()
        self.api = api
        self.content_type = "text/event-stream" if api == "openai" else "application/x-ndjson"
        self._held = bytearray()

    def feed(self, chunk: bytes) -> bytes:
        # Splitting searches each chunk once; only lines that can end the stream are parsed.
        self.on_lines(self._splitter.feed(chunk))
        # Whole lines only go out, so a stream failed mid-line (by the line cap or a cut) leaves the
        # caller no half line; what is held back is bounded by the line buffer's cap.
        end = chunk.rfind(b"\n") + 1
        if not end:
            self._held += chunk
            return b""
        out = bytes(self._held) + chunk[:end] if self._held else chunk[:end]
        self._held[:] = chunk[end:]
        return out

    def on_lines(self, lines: list[bytes]) -> bytes:
        for line in lines:
            self._inspect(line)
        return b""

    def finish(self) -> bytes:
        super().finish()  # reads the usage of a last line that had no newline
        held, self._held = bytes(self._held), bytearray()
        return held

    def _inspect(self, line: bytes) -> None:
        if self.api == "openai":
            if line.endswith(b"[DONE]"):
                self.finished_cleanly = True
            elif line.startswith(b"data: ") and b'"usage"' in line:
                usage = json.loads(line[6:]).get("usage")
                if usage:
                    self.usage = Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
        elif b'"done"' in line:
            obj = json.loads(line)
            if obj.get("done"):
                self.finished_cleanly = True
                self.usage = Usage(obj.get("prompt_eval_count"), obj.get("eval_count"))


class OpenAIToOllama(StreamTranslator):
    """SSE chunks from an OpenAI upstream become Ollama NDJSON.

    Some OpenAI-compatible servers ignore ``stream_options.include_usage``; then
    the number of content chunks stands in for the completion token count.
    """

    def __init__(self, operation: Operation, model: str) -> None:
        super().__init__()
        self._pieces = 0
        self.operation, self.model = operation, model
        self._finish_reason: str | None = None
        self._started = time.monotonic_ns()

    def on_lines(self, lines: list[bytes]) -> bytes:
        out = bytearray()
        for line in lines:
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                self.finished_cleanly = True
                out += self._final()
                continue
            obj = json.loads(payload)
            if obj.get("usage"):
                u = obj["usage"]
                self.usage = Usage(u.get("prompt_tokens"), u.get("completion_tokens"))
            for choice in obj.get("choices") or []:
                if choice.get("finish_reason"):
                    self._finish_reason = choice["finish_reason"]
                text = (
                    (choice.get("delta") or {}).get("content")
                    if self.operation == "chat"
                    else choice.get("text")
                )
                if text:
                    self._pieces += 1
                    out += _ndjson(self._piece(text, done=False))
        return bytes(out)

    def _piece(self, text: str, *, done: bool) -> dict[str, Any]:
        base: dict[str, Any] = {"model": self.model, "created_at": _now_rfc3339()}
        if self.operation == "chat":
            base["message"] = {"role": "assistant", "content": text}
        else:
            base["response"] = text
        base["done"] = done
        return base

    def _final(self) -> bytes:
        if self.usage.completion_tokens is None:
            self.usage.completion_tokens = self._pieces
        final = self._piece("", done=True)
        final.update(ollama_done_fields(self._finish_reason, self.usage, self._started))
        return _ndjson(final)


class OllamaToOpenAI(StreamTranslator):
    """Ollama NDJSON from an Ollama upstream becomes OpenAI SSE chunks."""

    content_type = "text/event-stream"

    def __init__(self, operation: Operation, model: str, include_usage: bool) -> None:
        super().__init__()
        self.operation, self.model, self.include_usage = operation, model, include_usage
        self._id = f"{'chatcmpl' if operation == 'chat' else 'cmpl'}-{time.time_ns():x}"
        self._created = int(time.time())
        self._sent_role = False

    def _chunk(self, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
        obj: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion.chunk" if self.operation == "chat" else "text_completion",
            "created": self._created,
            "model": self.model,
            "choices": choices,
        }
        if usage is not None:
            obj["usage"] = usage
        return _sse(obj)

    def on_lines(self, lines: list[bytes]) -> bytes:
        out = bytearray()
        for line in lines:
            obj = json.loads(line)
            if obj.get("error"):
                raise ValueError(str(obj["error"]))
            text = (obj.get("message") or {}).get("content", "") if self.operation == "chat" else obj.get("response", "")
            if self.operation == "chat" and not self._sent_role:
                self._sent_role = True
                out += self._chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
            if text:
                out += self._chunk([self._choice(text, None)])
            if obj.get("done"):
                self.finished_cleanly = True
                self.usage = Usage(obj.get("prompt_eval_count"), obj.get("eval_count"))
                out += self._chunk([self._choice("", obj.get("done_reason") or "stop")])
                if self.include_usage:
                    out += self._chunk([], usage=openai_usage(self.usage))
                out += b"data: [DONE]\n\n"
        return bytes(out)

    def _choice(self, text: str, finish: str | None) -> dict[str, Any]:
        if self.operation == "chat":
            delta = {"content": text} if text else {}
            return {"index": 0, "delta": delta, "finish_reason": finish}
        return {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}


def ollama_done_fields(finish_reason: str | None, usage: Usage, started_ns: int) -> dict[str, Any]:
    total = time.monotonic_ns() - started_ns
    return {
        "done_reason": finish_reason or "stop",
        "total_duration": total,
        "load_duration": 0,
        "prompt_eval_count": usage.prompt_tokens or 0,
        "prompt_eval_duration": 0,
        "eval_count": usage.completion_tokens or 0,
        "eval_duration": total,
    }


def openai_usage(usage: Usage) -> dict[str, int]:
    prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def make_stream_translator(upstream: Api, client: Api, operation: Operation, model: str, client_body: dict[str, Any]) -> StreamTranslator:
    if upstream == client:
        return PassThrough(client)
    if upstream == "openai":
        return OpenAIToOllama(operation, model)
    include_usage = bool((client_body.get("stream_options") or {}).get("include_usage"))
    return OllamaToOpenAI(operation, model, include_usage)
