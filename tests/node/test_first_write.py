"""A stream's head leaves the front door with its first chunk, in one write, on both data paths (the
splice and aiohttp's writer): the caller's first read holds the status line, the headers and the
first event, where a head written on its own at ``prepare`` cost every stream a second send and the
caller a second wake before its first byte (bench/README.md, "The rented link at 40 ms RTT"). A raw
socket reads what came: one write of a few kB on loopback is one segment, read whole by one recv."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.harness import NodeProc, TinyProc

MODEL = "first-model"


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory, data_path: str) -> Iterator[NodeProc]:
    root: Path = tmp_path_factory.mktemp(f"first-write-{data_path}")
    engine = TinyProc("--api", "openai", "--model", MODEL)
    node = NodeProc(root / "home", "alpha")
    try:
        node.start()
        node.cli("engines", "add", "oa", "--url", engine.url, "--api", "openai")
        yield node
    finally:
        node.stop()
        engine.stop()


def first_read(node: NodeProc, path: str, body: dict[str, object]) -> tuple[bytes, bytes]:
    """The first recv after sending the request, and the whole answer."""
    port = int(node.url.rsplit(":", 1)[1])
    payload = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
        first = sock.recv(1 << 20)
        rest = first
        while chunk := sock.recv(1 << 20):
            rest += chunk
    return first, rest


@pytest.mark.parametrize(("path", "limit", "marker"), [("/v1/chat/completions", {"max_tokens": 4}, b"data: "),
                                                      ("/api/chat", {"options": {"num_predict": 4}}, b'{"model"')],
                         ids=["openai-passthrough", "ollama-translated"])
def test_the_head_and_the_first_chunk_come_in_one_read(node: NodeProc, data_path: str, path: str,
                                                       limit: dict[str, object], marker: bytes) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True, **limit}
    first, whole = first_read(node, path, body)
    assert first.startswith(b"HTTP/1.1 200"), whole[:300]
    head, sep, after = first.partition(b"\r\n\r\n")
    assert sep, f"the first read held only part of the head: {first[:300]!r}"
    assert b"transfer-encoding: chunked" in head.lower()
    # The first chunk's size line, then its event: the answer's first bytes came with the head.
    size, _, event = after.partition(b"\r\n")
    assert size and int(size, 16) > 0 and event.startswith(marker), f"{data_path}: the head came alone: {first!r}"
    assert whole.endswith(b"0\r\n\r\n")
