"""One incremental line buffer for every NDJSON and SSE stream Pairwise reads.

Engines, rented nodes and peers send lines split across chunks however their sockets
cut them. Each chunk is searched once, for its own newlines only: the unfinished line is
kept in a growing buffer that is never searched again, so a very long line costs linear
time, and a line longer than ``max_line`` fails the stream instead of filling memory.
"""

from __future__ import annotations

from app.services.errors import UpstreamError

# Far above any real NDJSON/SSE line (a chunk with a long tool call or logprobs is a few KB).
MAX_LINE_BYTES = 1024 * 1024


class LineTooLong(UpstreamError):
    """An upstream sent a line longer than the cap: the stream fails, its line is not kept."""

    title = "Upstream line too long"

    def __init__(self, limit: int) -> None:
        super().__init__(f"the upstream sent a line longer than {limit} bytes; the stream was stopped")
        self.limit = limit


class LineBuffer:
    """Feed raw chunks, get back the complete lines they finish (stripped, empty ones skipped)."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self._pending = bytearray()  # the start of a line whose newline has not arrived

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            self._keep(chunk)
            return []
        parts = chunk.split(b"\n")
        if self._pending:
            self._pending += parts[0]
            parts[0] = bytes(self._pending)
            self._pending.clear()
        rest = parts.pop()
        lines = []
        for part in parts:
            if len(part) > self.max_line:
                raise LineTooLong(self.max_line)
            line = part.strip()
            if line:
                lines.append(line)
        self._keep(rest)
        return lines

    def rest(self) -> bytes:
        """What came after the last newline, when the stream has ended (stripped)."""
        rest = bytes(self._pending).strip()
        self._pending.clear()
        return rest

    def _keep(self, piece: bytes) -> None:
        if len(self._pending) + len(piece) > self.max_line:
            self._pending.clear()
            raise LineTooLong(self.max_line)
        self._pending += piece
