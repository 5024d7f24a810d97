"""Streamed responses from an upstream's API shape to the caller's.

A stream translator is fed raw upstream bytes and returns bytes for the caller. Every
translator also reads token usage, which the workload record keeps. The pass-through case
stays cheap: it forwards whole lines untouched, parsing only those that can carry usage.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from app.services.json_types import JsonObject
from app.services.translate.lines import LineBuffer, LineTooLong
from app.services.translate.shapes import Api
from app.services.translate.wire import OllamaAnswer, OpenAIAnswer, OpenAIUsage


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def sse(obj: Mapping[str, object]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def ndjson(obj: Mapping[str, object]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


class StreamTranslator:
    content_type = "application/x-ndjson"

    def __init__(self) -> None:
        self.usage = Usage()
        self.finished_cleanly = False
        self.context: object = None  # an Ollama generate answer's context (its next turn sends it back)
        self._splitter = LineBuffer()

    def feed(self, chunk: bytes) -> bytes:
        return self.on_lines(self._splitter.feed(chunk))

    def on_lines(self, lines: list[bytes]) -> bytes:
        raise NotImplementedError

    def finish(self) -> bytes:
        """What the caller gets from a last line the upstream did not end with a newline."""
        rest = self._splitter.rest()
        return self.on_lines([rest]) if rest else b""


def wants_usage_chunk(client_body: JsonObject) -> bool:
    options = client_body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


class PassThrough(StreamTranslator):
    """Same API both sides: whole lines forwarded as they come. Two edits, both by a C-speed
    search: the model is named as the caller sent it, and the usage chunk Pairwise asked for
    (for the job's record) is left out when the caller did not ask for it."""

    def __init__(self, api: Api, requested: str = "", upstream_model: str = "", keep_usage_chunk: bool = True) -> None:
        super().__init__()
        self.api = api
        self.content_type = "text/event-stream" if api == "openai" else "application/x-ndjson"
        self._held = bytearray()
        self._renames = [] if requested == upstream_model or not upstream_model else [
            (f'"model":{sep}{json.dumps(upstream_model)}'.encode(), f'"model":{sep}{json.dumps(requested)}'.encode())
            for sep in ("", " ")]
        self._drop_usage_chunk = api == "openai" and not keep_usage_chunk
        self._openai = api == "openai"
        self._cap = self._splitter.max_line

    def feed(self, chunk: bytes) -> bytes:
        # Whole lines only go out, so a stream failed mid-line (by the line cap or a cut) leaves the
        # caller no half line; what is held back (the line's start) is bounded by the line cap.
        held, cap = self._held, self._cap
        end = chunk.rfind(b"\n") + 1
        if not end:
            if len(held) + len(chunk) > cap:
                held.clear()
                raise LineTooLong(cap)
            held += chunk
            return b""
        if held:
            out = bytes(held) + chunk[:end]
            held.clear()
        else:
            out = chunk if end == len(chunk) else chunk[:end]
        if end < len(chunk):
            if len(chunk) - end > cap:
                raise LineTooLong(cap)
            held += chunk[end:]
        if len(out) > cap and any(len(line) > cap for line in out.split(b"\n")):
            raise LineTooLong(cap)
        # Only lines that can end the stream or carry usage are read, and a read whose whole lines
        # hold no such token (most of a stream) is not split into lines at all: one C-speed search
        # of the whole lines, the held start of the first one included, so a token cut across two
        # reads is found in the read that completes its line.
        # ``find`` rather than ``in``: bytes' ``in`` first tries its operand as an int, and the
        # TypeError it makes and clears costs more than the search (about 100 ns a read).
        if self._openai:
            usage = out.find(b'"usage"') >= 0 and _real_usage(out)
            if usage or out.find(b"[DONE]") >= 0:
                self._inspect_all(out)
                if usage and self._drop_usage_chunk:
                    out = _without_usage_chunk(out)
        elif self._may_end(out):
            self._inspect_all(out)
        if self._renames:
            for old, new in self._renames:
                out = out.replace(old, new)
        return out

    def _inspect_all(self, lines: bytes) -> None:
        for line in lines.split(b"\n"):
            line = line.strip()
            if line:
                self._inspect(line)

    @staticmethod
    def _may_end(lines: bytes) -> bool:
        # Every Ollama line says "done"; only one that does not say false can end the stream.
        done = lines.count(b'"done"')
        return bool(done) and done != lines.count(b'"done":false') + lines.count(b'"done": false')

    def _edited(self, out: bytes) -> bytes:
        for old, new in self._renames:
            out = out.replace(old, new)
        if self._drop_usage_chunk and b'"usage"' in out:
            out = _without_usage_chunk(out)
        return out

    def on_lines(self, lines: list[bytes]) -> bytes:
        for line in lines:
            self._inspect(line)
        return b""

    def finish(self) -> bytes:
        held, self._held = bytes(self._held), bytearray()
        last = held.strip()
        if last:  # a last line that had no newline: its usage and end still count
            self._inspect(last)
        return self._edited(held)

    def _inspect(self, line: bytes) -> None:
        if self.api == "openai":
            if line.endswith(b"[DONE]"):
                self.finished_cleanly = True
            elif line.startswith(b"data:") and b'"usage"' in line:
                chunk: OpenAIAnswer = json.loads(line[5:])
                usage = chunk.get("usage")
                if usage:
                    self.usage = Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
        elif b'"done"' in line:
            obj: OllamaAnswer = json.loads(line)
            if obj.get("done"):
                self.finished_cleanly = True
                self.usage = Usage(obj.get("prompt_eval_count"), obj.get("eval_count"))
                self.context = obj.get("context")


def _real_usage(lines: bytes) -> bool:
    # Asked for usage, OpenAI-style servers put "usage":null in every chunk: such lines carry none
    # (nor are they the usage chunk that may be dropped), so they need no reading.
    return lines.count(b'"usage"') != lines.count(b'"usage":null') + lines.count(b'"usage": null')


def _without_usage_chunk(lines: bytes) -> bytes:
    return b"\n".join(line for line in lines.split(b"\n") if not _is_usage_chunk(line))


def _is_usage_chunk(line: bytes) -> bool:
    if not line.startswith(b"data:") or b'"usage"' not in line:
        return False
    try:
        obj = json.loads(line[5:])
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("choices") == [] and bool(obj.get("usage"))


def ollama_done_fields(done_reason: str, usage: Usage, started_ns: int) -> OllamaAnswer:
    """The counts Ollama's final object carries; durations Pairwise did not measure are left out."""
    return {
        "done_reason": done_reason,
        "total_duration": time.monotonic_ns() - started_ns,
        "prompt_eval_count": usage.prompt_tokens or 0,
        "eval_count": usage.completion_tokens or 0,
    }


def openai_usage(usage: Usage) -> OpenAIUsage:
    prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
