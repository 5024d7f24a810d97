"""The incremental line buffer: every way a stream can be cut, and lines above the cap."""

from __future__ import annotations

import json

import pytest

from app.services.translate.lines import LineBuffer, LineTooLong

STREAM = b'{"a":1}\n\n{"b":"two words"}\r\ndata: {"c":3}\n\ndata: [DONE]\n\n'
EXPECTED = [b'{"a":1}', b'{"b":"two words"}', b'data: {"c":3}', b"data: [DONE]"]


def cuts(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 16, len(STREAM)])
def test_same_lines_however_the_stream_is_cut(size: int) -> None:
    buffer = LineBuffer()
    lines = [line for chunk in cuts(STREAM, size) for line in buffer.feed(chunk)]
    assert lines == EXPECTED and buffer.rest() == b""


def test_every_cut_point_of_a_two_line_stream() -> None:
    data = b'{"x":"' + b"y" * 50 + b'"}\n{"z":1}\n'
    for cut in range(len(data) + 1):
        buffer = LineBuffer()
        lines = buffer.feed(data[:cut]) + buffer.feed(data[cut:])
        assert [json.loads(line) for line in lines] == [{"x": "y" * 50}, {"z": 1}], cut


def test_unterminated_last_line_is_the_rest() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert buffer.feed(b":2}") == []
    assert buffer.rest() == b'{"b":2}'


def test_line_at_the_cap_passes() -> None:
    assert LineBuffer(max_line=100).feed(b"x" * 100 + b"\n") == [b"x" * 100]


@pytest.mark.parametrize("chunks", [
    [b"x" * 101 + b"\n"],  # whole, newline included
    cuts(b"x" * 101, 10),  # in pieces, no newline yet
    [b"x" * 60 + b"\n" + b"y" * 101],  # after a good line, in the same chunk
    [b"x" * 60, b"x" * 41 + b"\n"],  # the piece that finishes it makes it too long
], ids=["whole", "pieces", "after_a_line", "finishing_piece"])
def test_one_byte_over_the_cap_fails(chunks: list[bytes]) -> None:
    buffer = LineBuffer(max_line=100)
    with pytest.raises(LineTooLong, match="longer than 100 bytes"):
        for chunk in chunks:
            buffer.feed(chunk)


def test_a_50_mb_line_fails_once_it_passes_the_cap_without_reading_the_rest() -> None:
    buffer = LineBuffer()
    fed = 0
    with pytest.raises(LineTooLong):
        for _ in range(50 * 1024 * 1024 // 65536):
            fed += 65536
            buffer.feed(b"z" * 65536)
    assert fed <= buffer.max_line + 65536  # failed at the cap, not after 50 MB
