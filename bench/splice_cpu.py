"""In-process CPU per read of the pass-through splice's Python: the HTTP/1.1 reader, ``PassThrough``
and the caller's chunk framing, fed a recorded-shape OpenAI stream (what ``spliced.py`` runs inside
``data_received``, without the sockets). A supplement to the ``paced`` row (which reads the node's
CPU from /proc): the same work with no kernel, loop or scheduler in it, so A/B runs of two checkouts
are steady on a shared machine.

    python -m bench.splice_cpu [--chunks 20000] [--rounds 7] [--rename]

``paced``: one engine chunk per read (a paced stream). ``unpaced``: the same bytes cut into reads of
64 KiB at arbitrary offsets (an engine faster than the loop). ``spliced``: the paced reads through the
splice's real glue as well, from the engine connection's ``data_received`` (``splice_client``) through
``spliced._Splicer`` to the front door's ``_TransportOut`` writing onto a caller transport that does no
I/O (the idle timer armed, as in a node): what a node's Python does per read, without the loop's
dispatch and the two system calls. It drives the modules' own classes, so it runs on an older checkout
too (``PYTHONPATH=<tree>``) for A/B.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
import types
from collections import deque

from aiohttp import web

from app.services import eventloop
from app.services.backends import splice_client
from app.services.backends.base import Opened
from app.services.backends.h1_response import ResponseReader
from app.services.frontdoor import http as frontdoor_http
from app.services.inference import StreamSession
from app.services.spliced import splice
from app.services.translate.responses import PassThrough, StreamTranslator

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def sse(obj: object) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def events(chunks: int, model: str) -> list[bytes]:
    base = {"id": "chatcmpl-tiny0123456789", "object": "chat.completion.chunk", "created": 1764892800,
            "model": model, "system_fingerprint": "fp_tiny"}
    out = [sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                     "logprobs": None, "finish_reason": None}]})]
    out += [sse({**base, "choices": [{"index": 0, "delta": {"content": f" tok{i}"}, "logprobs": None,
                                      "finish_reason": None}]}) for i in range(chunks)]
    out.append(sse({**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "length"}]}))
    out.append(sse({**base, "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": chunks,
                                                      "total_tokens": chunks + 7}}))
    out.append(b"data: [DONE]\n\n")
    return out


def wire(evs: list[bytes]) -> list[bytes]:
    """Each event as the engine's server frames it: one HTTP chunk, one read."""
    return [HEAD + b"%x\r\n%b\r\n" % (len(evs[0]), evs[0])] + [b"%x\r\n%b\r\n" % (len(e), e) for e in evs[1:]] + [b"0\r\n\r\n"]


def run(reads: list[bytes], requested: str, upstream: str) -> tuple[float, int]:
    reader = ResponseReader()
    passing = PassThrough("openai", requested, upstream, keep_usage_chunk=False)
    sent = 0
    start = time.process_time()
    for data in reads:
        pieces = reader.feed(data)
        if pieces:
            piece = pieces[0] if len(pieces) == 1 else b"".join(pieces)
            out = passing.feed(piece)
            if out:
                sent += len(b"%x\r\n%b\r\n" % (len(out), out))
    sent += len(passing.finish())
    elapsed = time.process_time() - start
    assert reader.done and passing.finished_cleanly and passing.usage.completion_tokens is not None
    return elapsed, sent


class _Wire:
    """The engine's transport, doing no I/O (paused and resumed by the splice, never per read)."""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass


def _caller() -> tuple[types.SimpleNamespace, deque[bytes]]:
    """The caller's transport: its per-read methods are C calls, as uvloop's are (a Python stand-in
    would add three Python calls per read to both sides of an A/B); it keeps the last write."""
    last: deque[bytes] = deque(maxlen=1)
    return types.SimpleNamespace(write=last.append, is_closing=False.__bool__,
                                 get_write_buffer_size=(0).__int__), last


async def _spliced(reads: list[bytes], requested: str, upstream: str) -> tuple[float, int]:
    conn = splice_client._Conn(splice_client._Pool(60.0, 1))
    conn.connection_made(_Wire())  # type: ignore[arg-type]
    exchange = splice_client.Exchange(conn, "bench")
    conn.exchange = exchange
    conn.data_received(reads[0])
    first = await exchange.next_piece()
    exchange.arm_idle(300.0)

    async def nothing() -> None:
        return None

    async def finish(state: str, error: str | None, translator: StreamTranslator) -> None:
        return None

    opened = Opened(status=200, content_type="text/event-stream", first_chunk=first, rest=None,  # type: ignore[arg-type]
                    closer=nothing, splice=exchange)
    session = StreamSession(opened, None, PassThrough("openai", requested, upstream, keep_usage_chunk=False),  # type: ignore[arg-type]
                            finish, "openai")
    response = web.StreamResponse()
    response.headers["Transfer-Encoding"] = "chunked"
    caller, last = _caller()
    task = asyncio.ensure_future(splice(session, exchange, frontdoor_http._TransportOut(caller, response, None)))
    await asyncio.sleep(0)  # the splice starts: the first chunk written, the exchange pushing
    received = conn.data_received
    start = time.process_time()
    for data in reads[1:]:
        received(data)
    elapsed = time.process_time() - start
    assert await task and session.translator.finished_cleanly and last[0].endswith(b"data: [DONE]\n\n\r\n")
    exchange.release()
    return elapsed, 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rename", action="store_true", help="the caller asked for another name than the engine's")
    args = parser.parse_args()
    upstream = "tiny-upstream"
    requested = "tiny-asked" if args.rename else upstream
    paced = wire(events(args.chunks, upstream))
    whole = b"".join(paced)
    unpaced = [whole[i:i + 65536] for i in range(0, len(whole), 65536)]
    print(f"load average {os.getloadavg()[0]:.2f}; {len(paced)} events; rename={args.rename}")
    for name, reads in (("paced", paced), ("unpaced", unpaced)):
        per_chunk = []
        for _ in range(args.rounds):
            elapsed, _ = run(reads, requested, upstream)
            per_chunk.append(elapsed / len(paced) * 1e6)
        print(f"{name:8s} µs per engine chunk: min {min(per_chunk):.3f}  median {statistics.median(per_chunk):.3f}"
              f"  ({len(reads)} reads)")
    per_chunk = []
    for _ in range(args.rounds):
        elapsed, _ = eventloop.run(_spliced(paced, requested, upstream))
        per_chunk.append(elapsed / (len(paced) - 1) * 1e6)
    print(f"{'spliced':8s} µs per engine chunk: min {min(per_chunk):.3f}  median {statistics.median(per_chunk):.3f}"
          f"  ({len(paced) - 1} reads through the splice's glue)")


if __name__ == "__main__":
    main()
