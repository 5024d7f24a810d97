"""The caller's API is the upstream's API: forward the stream with the least work that stays correct.

What still has to happen, and how little it costs:

* **Usage and the end of the stream** are read from the few lines that can carry them
  (``"usage"`` in an OpenAI SSE line, ``"done"`` in an Ollama NDJSON line); only those are
  decoded. The line buffer (``translate.lines``) searches each chunk once.
* **The model name the caller sent** is echoed: the upstream names the model its own way
  (``tiny:latest`` for ``tiny``, a peer's spelling), so ``"model":"<upstream's>"`` is
  rewritten with one ``bytes.replace`` per chunk, and only when the two names differ. The
  pattern has unescaped quotes, so it cannot match inside a JSON string (where they are ``\\"``).
* **The usage chunk the caller did not ask for** is hidden: Pairwise asks OpenAI upstreams
  for usage (``stream_options.include_usage``) to record tokens; a caller that did not ask
  does not get the extra ``choices: []`` chunk. Only a line that carries usage is decoded
  to decide.
* **Whole lines only** go out, so a stream failed mid-line (by the line cap or a cut) leaves
  the caller no half line; what is held back is bounded by the line buffer's cap.
"""

from __future__ import annotations

import json
from typing import Any

from app.services.translate.responses import StreamTranslator, Usage
from app.services.translate.shapes import Api


def model_rewrite(upstream_model: str | None, requested: str) -> list[tuple[bytes, bytes]]:
    """The byte replacements that make an upstream's ``model`` field say what the caller asked for."""
    if not upstream_model or upstream_model == requested:
        return []
    theirs, ours = json.dumps(upstream_model).encode(), json.dumps(requested).encode()
    return [(b'"model":' + theirs, b'"model":' + ours), (b'"model": ' + theirs, b'"model": ' + ours)]


def echo_model(body: bytes, rewrite: list[tuple[bytes, bytes]]) -> bytes:
    for theirs, ours in rewrite:
        if theirs in body:
            body = body.replace(theirs, ours)
    return body


def wants_usage(api: Api, client_body: dict[str, Any]) -> bool:
    options = client_body.get("stream_options")
    return api != "openai" or (isinstance(options, dict) and bool(options.get("include_usage")))


class PassThrough(StreamTranslator):
    def __init__(self, api: Api, *, requested: str = "", upstream_model: str | None = None,
                 show_usage: bool = True) -> None:
        super().__init__()
        self.api = api
        self.content_type = "text/event-stream" if api == "openai" else "application/x-ndjson"
        self._held = bytearray()
        self._rewrite = model_rewrite(upstream_model, requested)
        self._show_usage = show_usage
        self._hidden: list[bytes] = []  # lines of the current chunk the caller does not get

    def feed(self, chunk: bytes) -> bytes:
        self.on_lines(self._splitter.feed(chunk))
        end = chunk.rfind(b"\n") + 1
        if not end:
            self._held += chunk
            return b""
        out = bytes(self._held) + chunk[:end] if self._held else chunk[:end]
        self._held[:] = chunk[end:]
        return self._shaped(out)

    def finish(self) -> bytes:
        super().finish()  # reads the usage of a last line that had no newline
        held, self._held = bytes(self._held), bytearray()
        return self._shaped(held) if held else b""

    def _shaped(self, out: bytes) -> bytes:
        if self._hidden:
            for line in self._hidden:
                out = _without_line(out, line)
            self._hidden.clear()
        return echo_model(out, self._rewrite) if self._rewrite else out

    def on_lines(self, lines: list[bytes]) -> bytes:
        for line in lines:
            self._inspect(line)
        return b""

    def _inspect(self, line: bytes) -> None:
        if self.api == "openai":
            if line.endswith(b"[DONE]"):
                self.finished_cleanly = True
            elif line.startswith(b"data:") and b'"usage"' in line:
                obj = json.loads(line[5:])
                usage = obj.get("usage") if isinstance(obj, dict) else None
                if isinstance(usage, dict):
                    self.usage = Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
                    if not self._show_usage and not obj.get("choices"):
                        self._hidden.append(line)  # the usage-only chunk Pairwise asked for, not the caller
        elif b'"done"' in line:
            obj = json.loads(line)
            if isinstance(obj, dict) and obj.get("done"):
                self.finished_cleanly = True
                self.usage = Usage(obj.get("prompt_eval_count"), obj.get("eval_count"))


def _without_line(out: bytes, line: bytes) -> bytes:
    """``out`` without ``line`` and the line breaks that end it (an SSE event's blank line too)."""
    start = out.find(line)
    if start < 0:
        return out  # its start went out with an earlier chunk: it is passed on rather than cut in half
    end = start + len(line)
    while end < len(out) and out[end:end + 1] in (b"\r", b"\n"):
        end += 1
    return out[:start] + out[end:]
