"""The splice's reading of an engine's answer (``ResponseReader`` then ``PassThrough``, as
``spliced.py`` runs them per read) gives the same bytes, the same usage and the same end however the
engine framed its chunks and however the socket cut its reads: the reads that skip the line scan
(no usage, no end, nothing to rename in them) must not miss a token split across two reads or two
chunks."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest

from app.services.backends.h1_response import ResponseReader
from app.services.translate.lines import LineTooLong
from app.services.translate.responses import PassThrough

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def sse(obj: object, spaced: bool = False) -> bytes:
    return b"data: " + json.dumps(obj, separators=(", ", ": ") if spaced else (",", ":")).encode() + b"\n\n"


def openai_body() -> bytes:
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "up-model"}
    return b"".join([
        sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}], "usage": None}),
        sse({**base, "choices": [{"index": 0, "delta": {"content": "usage [DONE] up-model"}}], "usage": None}, spaced=True),
        b": keep-alive comment\n\n",
        sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        sse({**base, "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 23, "total_tokens": 34}}),
        b"data: [DONE]\n\n",
    ])


def ollama_body() -> bytes:
    lines = [{"model": "up-model", "message": {"role": "assistant", "content": w}, "done": False} for w in ("a", "done", "b")]
    lines.append({"model": "up-model", "message": {"role": "assistant", "content": ""}, "done": True,
                  "done_reason": "stop", "prompt_eval_count": 5, "eval_count": 3, "context": [1, 2]})
    return b"".join(json.dumps(o).encode() + b"\n" for o in lines)


def chunked(body: bytes, cuts: list[int]) -> bytes:
    """``body`` framed as chunks that end at ``cuts``, with an extension and upper-case hex here and there."""
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(body))), len(body)]
    out = [HEAD]
    for n, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        size = b"%X" % (b - a) if n % 3 == 1 else b"%x" % (b - a)
        out.append(size + (b";x=1" if n % 4 == 3 else b"") + b"\r\n" + body[a:b] + b"\r\n")
    out.append(b"0\r\n\r\n")
    return b"".join(out)


@dataclass
class Read:
    out: bytes
    prompt: int | None
    completion: int | None
    clean: bool
    context: object


def read(api: str, wire: bytes, read_cuts: list[int], *, rename: bool, keep_usage: bool) -> Read:
    """What the caller gets, read the way ``spliced._Splicer`` does: one ``PassThrough.feed`` per read."""
    reader = ResponseReader()
    passing = PassThrough(api, "asked" if rename else "up-model", "up-model", keep_usage_chunk=keep_usage)  # type: ignore[arg-type]
    bounds = [0, *sorted(set(c for c in read_cuts if 0 < c < len(wire))), len(wire)]
    out = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        pieces = reader.feed(wire[a:b])
        if pieces:
            out.append(passing.feed(pieces[0] if len(pieces) == 1 else b"".join(pieces)))
    out.append(passing.finish())
    assert reader.done
    return Read(b"".join(out), passing.usage.prompt_tokens, passing.usage.completion_tokens,
                passing.finished_cleanly, passing.context)


def expected(api: str, body: bytes, *, rename: bool, keep_usage: bool) -> bytes:
    if rename:
        body = body.replace(b'"model": "up-model"', b'"model": "asked"').replace(b'"model":"up-model"', b'"model":"asked"')
    if api == "openai" and not keep_usage:
        body = b"\n".join(line for line in body.split(b"\n") if b'"choices":[],"usage":{' not in line)
    return body


CASES = [("openai", rename, keep) for rename in (False, True) for keep in (False, True)] + [("ollama", r, True) for r in (False, True)]


@pytest.mark.parametrize(("api", "rename", "keep_usage"), CASES)
def test_a_chunk_boundary_and_a_read_boundary_at_every_offset_give_the_same_answer(api: str, rename: bool, keep_usage: bool) -> None:
    body = openai_body() if api == "openai" else ollama_body()
    whole = read(api, chunked(body, []), [], rename=rename, keep_usage=keep_usage)
    assert whole.out == expected(api, body, rename=rename, keep_usage=keep_usage)
    assert whole.clean
    if api == "openai":
        assert (whole.prompt, whole.completion) == (11, 23)
        assert (b'"usage":{"prompt_tokens":11' in whole.out) is keep_usage and whole.out.endswith(b"data: [DONE]\n\n")
    else:
        assert (whole.prompt, whole.completion, whole.context) == (5, 3, [1, 2])
    assert (b"up-model" in whole.out.replace(b'"usage [DONE] up-model"', b"")) is not rename
    one_chunk = chunked(body, [])
    for offset in range(1, len(body)):
        # The engine cut its chunks there (one chunk a read), and the socket cut one chunk's read there.
        as_chunks = chunked(body, [offset])
        each = read(api, as_chunks, [as_chunks.index(b"\r\n", len(HEAD)) + 2 + offset + 2], rename=rename, keep_usage=keep_usage)
        split = read(api, one_chunk, [len(HEAD) + offset], rename=rename, keep_usage=keep_usage)
        for got in (each, split):
            assert got == whole, offset
    for offset in range(1, len(one_chunk)):  # a read boundary inside the framing too
        assert read(api, one_chunk, [offset], rename=rename, keep_usage=keep_usage) == whole, offset


@pytest.mark.parametrize(("api", "rename", "keep_usage"), CASES)
def test_random_chunks_and_reads_give_the_same_answer(api: str, rename: bool, keep_usage: bool) -> None:
    body = openai_body() if api == "openai" else ollama_body()
    whole = read(api, chunked(body, []), [], rename=rename, keep_usage=keep_usage)
    rng = random.Random(31)
    for _ in range(300):
        wire = chunked(body, rng.sample(range(1, len(body)), rng.randint(1, 40)))
        got = read(api, wire, rng.sample(range(1, len(wire)), rng.randint(1, 60)), rename=rename, keep_usage=keep_usage)
        assert got == whole
    byte_by_byte = read(api, chunked(body, list(range(1, len(body)))), list(range(1, 50 * len(body))),
                        rename=rename, keep_usage=keep_usage)
    assert byte_by_byte == whole


def test_a_line_over_the_cap_fails_whether_or_not_its_read_holds_a_newline() -> None:
    for tail in (b"", b"\n"):
        passing = PassThrough("openai")
        passing.feed(b"data: {}\n\n")
        with pytest.raises(LineTooLong):
            for _ in range(2 * 1024 + 1):
                passing.feed(b"x" * 512)
            passing.feed(tail)
    passing = PassThrough("openai")
    with pytest.raises(LineTooLong):  # the whole long line in one read, its newline with it
        passing.feed(b"data: " + b"x" * (1024 * 1024) + b"\n\n")
