"""The splice's HTTP/1.1 response reader: every framing an engine may use, fed whole and cut at every
byte, and the answers it must refuse rather than guess at."""

from __future__ import annotations

import pytest

from app.services.backends.h1_response import MalformedResponse, ResponseReader


def read_split(raw: bytes, cut: int | None = None) -> tuple[ResponseReader, bytes]:
    reader = ResponseReader()
    pieces = [raw] if cut is None else [raw[:cut], raw[cut:]]
    body = b"".join(b"".join(reader.feed(p)) for p in pieces if p)
    return reader, body


PARTS = [b'data: {"a":1}\n\n', b"data: x", b"[DONE]\n\n\n\n\n\n"]
CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
           + b"%x\r\n%b\r\n" % (len(PARTS[0]), PARTS[0])
           + b"%x;ext=1\r\n%b\r\n" % (len(PARTS[1]), PARTS[1])  # an extension is ignored
           + b"%X\r\n%b\r\n" % (len(PARTS[2]), PARTS[2])  # upper-case hex
           + b"0\r\nX-Trailer: yes\r\n\r\n")
CHUNKED_BODY = b"".join(PARTS)


@pytest.mark.parametrize("cut", [None, *range(1, len(CHUNKED))])
def test_chunked_body_at_every_cut(cut: int | None) -> None:
    reader, body = read_split(CHUNKED, cut)
    assert body == CHUNKED_BODY
    assert reader.done and reader.reusable
    assert reader.head is not None and reader.head.status == 200
    assert reader.head.headers["content-type"] == "text/event-stream"


LENGTH = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 11\r\nConnection: keep-alive\r\n\r\n{\"e\":\"no\"}\n"


@pytest.mark.parametrize("cut", [None, *range(1, len(LENGTH))])
def test_length_body_at_every_cut(cut: int | None) -> None:
    reader, body = read_split(LENGTH, cut)
    assert body == b'{"e":"no"}\n' and reader.done and reader.reusable
    assert reader.head is not None and reader.head.status == 503 and reader.head.reason == "Service Unavailable"


def test_a_body_without_length_runs_to_the_close_and_the_connection_is_not_kept() -> None:
    reader = ResponseReader()
    assert reader.feed(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n{\"a\":1}\n") == [b'{"a":1}\n']
    assert not reader.done and reader.until_close
    assert reader.feed(b"{\"done\":true}\n") == [b'{"done":true}\n']
    reader.eof()
    assert reader.done and not reader.reusable


def test_connection_close_and_http_1_0_are_not_kept() -> None:
    for raw in (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
                b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"):
        reader, body = read_split(raw)
        assert body == b"ok" and reader.done and not reader.reusable


def test_interim_answers_are_skipped_and_bodiless_statuses_end_at_the_head() -> None:
    reader, body = read_split(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
    assert body == b"" and reader.done and reader.reusable
    assert reader.head is not None and reader.head.status == 204


def test_repeated_headers_are_joined_and_names_lower_cased() -> None:
    reader, _ = read_split(b"HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 0\r\n\r\n")
    assert reader.head is not None and reader.head.headers["x-a"] == "1, 2" and reader.done


def test_a_cut_chunked_body_is_not_done() -> None:
    reader = ResponseReader()
    reader.feed(CHUNKED[:90])
    reader.eof()
    assert not reader.done


@pytest.mark.parametrize("raw", [
    b"SPDY/3 200 OK\r\n\r\n",
    b"HTTP/1.1 2000 OK\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 2000,
])
def test_what_is_not_a_response_is_refused(raw: bytes) -> None:
    with pytest.raises(MalformedResponse):
        ResponseReader().feed(raw)


def test_an_endless_head_is_refused() -> None:
    reader = ResponseReader()
    reader.feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(MalformedResponse):
        for _ in range(100):
            reader.feed(b"X-Filler: " + b"y" * 1000 + b"\r\n")


def test_reset_reads_the_next_response_on_a_kept_connection() -> None:
    reader, _ = read_split(LENGTH)
    reader.reset()
    reader2_body = b"".join(reader.feed(CHUNKED))
    assert reader2_body == CHUNKED_BODY and reader.done


def read_bytewise(raw: bytes) -> tuple[ResponseReader, bytes]:
    """The same bytes one at a time: never one whole chunk in a read, so never the short way."""
    reader = ResponseReader()
    return reader, b"".join(b"".join(reader.feed(raw[i:i + 1])) for i in range(len(raw)))


def chunked(*reads: bytes) -> list[bytes]:
    return [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", *reads]


LOOKS_LIKE_TWO = b"x\r\n3\r\nabc\r\n"  # one chunk's data that reads like the end of one and a next one


@pytest.mark.parametrize("reads", [
    chunked(b"b\r\nhello world\r\n", b"0\r\n\r\n"),  # one whole chunk per read: the short way
    chunked(b"%x\r\n%b\r\n" % (len(LOOKS_LIKE_TWO), LOOKS_LIKE_TWO), b"0\r\n\r\n"),
    chunked(b"3\r\none\r\n3\r\ntwo\r\n", b"0\r\n\r\n"),  # two chunks in a read
    chunked(b"B\r\nhello world\r\n", b"0\r\n\r\n"),  # upper case
    chunked(b"00b\r\nhello world\r\n", b"0\r\n\r\n"),  # leading zeros
    chunked(b"b;x=1\r\nhello world\r\n", b"0\r\n\r\n"),  # an extension
    chunked(b"f\r\nhello world\r\n", b"ab\r\n", b"0\r\n\r\n"),  # a chunk longer than its read
    chunked(b"b\r\nhello", b" world\r\n", b"b\r\nhello world\r\n", b"0\r\n\r\n"),  # after a cut one
    chunked(b"b\r\nhello world\r\n0\r\n\r\n"),  # the last chunk in the same read
])
def test_a_read_of_one_whole_chunk_gives_what_every_other_cut_gives(reads: list[bytes]) -> None:
    reader = ResponseReader()
    pieces = [reader.feed(read) for read in reads]
    slow_reader, slow_body = read_bytewise(b"".join(reads))
    assert b"".join(b"".join(p) for p in pieces) == slow_body
    assert reader.done and slow_reader.done and reader.reusable
    whole = [p for read, p in zip(reads[1:], pieces[1:], strict=True) if read == b"b\r\nhello world\r\n"]
    assert all(p == [b"hello world"] for p in whole)


@pytest.mark.parametrize("read", [
    b"5\r\nhello world\r\n",  # a size shorter than the read's chunk
    b"0x5\r\nhello\r\n",  # int() would take it; HTTP does not
    b"+b\r\nhello world\r\n",
    b"b\r\nhello worldXY\r\n",  # not a CRLF right after the data
])
def test_a_read_that_only_looks_like_one_whole_chunk_is_refused_as_before(read: bytes) -> None:
    reader = ResponseReader()
    reader.feed(chunked()[0])
    with pytest.raises(MalformedResponse):
        reader.feed(read)
    with pytest.raises(MalformedResponse):
        read_bytewise(chunked(read)[0] + read)
