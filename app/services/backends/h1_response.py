"""An incremental HTTP/1.1 response reader for the pass-through splice (``splice_client.py``).

Fed the bytes of one connection as they arrive, it gives back the body's bytes (de-framed) and says
when the head is read and when the body has ended. It knows what an engine's answer can be: a status
line and headers, then a body delimited by chunked framing, a Content-Length, or the connection's
close; interim 1xx heads are skipped. Whether the connection may carry the next request is
``reusable`` once ``done``. A response it cannot read raises ``MalformedResponse``, never guesses:
the splice then fails the stream as cut (or, before the first byte, fails over).

It keeps no body: each piece of body it returns is a slice of what it was fed, so a chunk the
engine wrote as one SSE event costs one search for its size line and one slice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.services.errors import UpstreamError

# A head larger than this is no engine's answer (aiohttp's own default limit is 8 KB a line).
MAX_HEAD_BYTES = 64 * 1024
# A chunk-size line (hex size and extensions) longer than this is malformed.
MAX_SIZE_LINE = 1024
NO_BODY_STATUSES = frozenset({204, 304})


class MalformedResponse(UpstreamError):
    """The upstream's bytes are not an HTTP/1.1 response."""


@dataclass
class ResponseHead:
    status: int
    reason: str
    version: str
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names; a repeated one joined by ", "


def _plain_size(text: bytes) -> int | None:
    """A chunk size of hex digits only (what engines send), or None for ``_chunk_size`` to judge:
    letters and digits exclude ``int``'s signs, spaces and underscores; ``0x`` is refused there."""
    if text.isalnum() and text[1:2] not in (b"x", b"X"):
        try:
            return int(text, 16)
        except ValueError:
            return None
    return None


class ResponseReader:
    """One response at a time: ``feed`` until ``done``; ``reset`` before reading the next one."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.head: ResponseHead | None = None
        self.done = False
        self.reusable = False
        self._buf = b""  # unparsed framing (head, a size line, a chunk's CRLF, trailers)
        self._mode = "head"  # head | length | chunk-size | chunk-data | chunk-end | trailers | close | done
        self._left = 0  # body bytes left (length) or bytes left in the current chunk

    @property
    def until_close(self) -> bool:
        """The body ends when the connection does (no length, no chunking)."""
        return self._mode == "close"

    def feed(self, data: bytes) -> list[bytes]:
        """The body pieces ``data`` completes, in order. Bytes after the response's end are an error
        (an engine does not answer a request it was not sent)."""
        if self._mode == "chunk-size" and not self._buf:
            # The read a paced stream is made of: exactly one whole chunk, its size in lower-case hex
            # without leading zeros (as aiohttp, h11 and Go's net/http write it). Its size must then be
            # what is left after the size line and the two CRLFs, so reading it is one search, one
            # format, one comparison and one slice. Anything else (several chunks or part of one, an
            # extension, upper case, leading zeros, the last chunk) is read below, with every check.
            nl = data.find(b"\r\n", 0, 18)
            if nl > 0:
                whole = len(data) - nl - 4  # the chunk's size, if the read is one whole chunk
                if whole > 0 and data.endswith(b"\r\n") and data[:nl] == b"%x" % whole:
                    return [data[nl + 2:-2]]
        pieces: list[bytes] = []
        if self._buf:
            data, self._buf = self._buf + data, b""
        pos, end = 0, len(data)
        while pos < end:
            mode = self._mode
            if mode == "chunk-data" or mode == "length":
                take = min(self._left, end - pos)
                pieces.append(data[pos:pos + take] if pos or take < end else data)
                pos += take
                self._left -= take
                if self._left == 0:
                    if mode == "length":
                        self._finish()
                    else:
                        self._mode = "chunk-end"
            elif mode == "close":
                pieces.append(data[pos:] if pos else data)
                pos = end
            elif mode == "chunk-size":
                nl = data.find(b"\n", pos)
                if nl < 0:
                    self._keep(data, pos, MAX_SIZE_LINE)
                    return pieces
                size = _plain_size(data[pos:nl - 1]) if nl > pos and data[nl - 1] == 13 else None  # 13: "\r"
                if size is None:  # an extension, a bare "\n", an error: the full check
                    self._chunk_size(data[pos:nl])
                    pos = nl + 1
                    continue
                pos = nl + 1
                stop = pos + size
                if size and data[stop:stop + 2] == b"\r\n":
                    # The usual read: whole chunks, each one size line, one slice and no change of mode.
                    pieces.append(data[pos:stop])
                    pos = stop + 2
                elif size:
                    self._mode, self._left = "chunk-data", size
                else:
                    self._mode = "trailers"
            elif mode == "chunk-end":
                nl = data.find(b"\n", pos)
                if nl < 0:
                    self._keep(data, pos, 2)
                    return pieces
                if data[pos:nl].strip():
                    raise MalformedResponse("a chunk's data did not end where its size said")
                pos = nl + 1
                self._mode = "chunk-size"
            elif mode == "trailers":
                nl = data.find(b"\n", pos)
                if nl < 0:
                    self._keep(data, pos, MAX_HEAD_BYTES)
                    return pieces
                line = data[pos:nl]
                pos = nl + 1
                if not line.strip():
                    self._finish()
            elif mode == "head":
                stop = data.find(b"\r\n\r\n", pos)
                sep = 4
                if stop < 0:
                    stop, sep = data.find(b"\n\n", pos), 2
                if stop < 0:
                    self._keep(data, pos, MAX_HEAD_BYTES)
                    return pieces
                if stop - pos > MAX_HEAD_BYTES:
                    raise MalformedResponse("the response's head is too long")
                self._read_head(data[pos:stop])
                pos = stop + sep
            else:  # done: nothing may follow
                raise MalformedResponse("the upstream sent bytes after its response ended")
        return pieces

    def eof(self) -> None:
        """The connection closed: the response ends here if its body runs to the close; otherwise
        it was cut (``MalformedResponse`` for a head cut short; the caller tells cut from whole by ``done``)."""
        if self._mode == "close":
            self._mode, self.done, self.reusable = "done", True, False

    def _keep(self, data: bytes, pos: int, limit: int) -> None:
        rest = data[pos:]
        if len(rest) > limit:
            raise MalformedResponse("the response's framing is too long")
        self._buf = rest

    def _finish(self) -> None:
        self._mode, self.done = "done", True

    def _chunk_size(self, line: bytes) -> None:
        text = line.split(b";", 1)[0].strip()
        try:
            size = int(text, 16)
        except ValueError:
            raise MalformedResponse(f"a chunk size is not hexadecimal: {text[:20]!r}") from None
        if size < 0 or text[:1] in (b"-", b"+") or text.lower().startswith(b"0x"):
            raise MalformedResponse("a chunk size is not hexadecimal")
        if size == 0:
            self._mode = "trailers"
        else:
            self._mode, self._left = "chunk-data", size

    def _read_head(self, raw: bytes) -> None:
        lines = raw.replace(b"\r\n", b"\n").split(b"\n")
        parts = lines[0].decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise MalformedResponse(f"not an HTTP/1.x status line: {lines[0][:60]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or not name or name != name.strip():
                raise MalformedResponse(f"a header line is malformed: {line[:60]!r}")
            key, value = name.lower(), value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        if 100 <= status < 200:
            return  # an interim answer (100 Continue): the real head follows
        head = ResponseHead(status, parts[2] if len(parts) > 2 else "", parts[0], headers)
        self.head = head
        connection = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        keep_alive = (head.version == "HTTP/1.1" and "close" not in connection) or "keep-alive" in connection
        encoding = [t.strip().lower() for t in headers.get("transfer-encoding", "").split(",") if t.strip()]
        if encoding:
            if encoding[-1] != "chunked":
                self._mode, self.reusable = "close", False
                return
            self._mode, self.reusable = "chunk-size", keep_alive
            return
        if status in NO_BODY_STATUSES:
            self.reusable = keep_alive
            self._finish()
            return
        length = headers.get("content-length")
        if length is None:
            self._mode, self.reusable = "close", False
            return
        if not length.isdigit():
            raise MalformedResponse(f"Content-Length is not a number: {length[:20]!r}")
        self._left, self.reusable = int(length), keep_alive
        if self._left == 0:
            self._finish()
        else:
            self._mode = "length"
