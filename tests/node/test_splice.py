"""The pass-through splice through a node: taken for same-API streams only (PAIRWISE_SPLICE=off takes
aiohttp's path), with the same answer, model name, hidden usage chunk, job record and tokens on both
paths; a slow caller gets the whole answer; an HTTP/1.0 caller gets it unframed."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import job

SPLICE_AGENT = "pairwise"  # the splice's User-Agent; aiohttp's client names itself


@dataclass
class SpliceNode:
    node: NodeProc
    openai_engine: TinyProc
    ollama_engine: TinyProc
    path: str


@pytest.fixture(scope="module")
def splice_node(tmp_path_factory: pytest.TempPathFactory, data_path: str) -> Iterator[SpliceNode]:
    root: Path = tmp_path_factory.mktemp(f"splice-{data_path}")
    oa = TinyProc("--api", "openai", "--model", "oa-model")
    ol = TinyProc("--api", "ollama", "--model", "ol-model:latest")
    node = NodeProc(root / "home", "alpha")
    try:
        node.start()
        node.cli("engines", "add", "oa", "--url", oa.url, "--api", "openai")
        node.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama")
        yield SpliceNode(node, oa, ol, data_path)
    finally:
        node.stop()
        oa.stop()
        ol.stop()


def stream(node: NodeProc, path: str, body: dict) -> tuple[httpx.Response, bytes]:
    with httpx.Client(timeout=30, trust_env=False) as client, client.stream("POST", node.url + path, json=body) as r:
        return r, r.read()


def agent(tiny: TinyProc) -> str:
    return str(tiny.stats()["last_headers"].get("user-agent", ""))


def ended(node: NodeProc, response: httpx.Response) -> dict:
    job_id = response.headers["X-Pairwise-Job"]
    return wait_until(lambda: (j := job(node, job_id)) and j["state"] != "running" and j, what="the job to end")


def test_an_openai_stream_passes_through_with_its_usage_counted_and_hidden(splice_node: SpliceNode) -> None:
    s = splice_node
    response, raw = stream(s.node, "/v1/chat/completions", {
        "model": "oa-model", "stream": True, "messages": [{"role": "user", "content": "hi there"}]})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert (agent(s.openai_engine) == SPLICE_AGENT) == (s.path == "splice")
    events = [line[6:] for line in raw.decode().split("\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks and all(c["model"] == "oa-model" for c in chunks)
    assert not any(c.get("usage") for c in chunks), "the usage chunk Pairwise asked for stays hidden"
    record = ended(s.node, response)
    assert record["state"] == "completed" and record["engine"] == "oa"
    assert record["prompt_tokens"] > 0 and record["completion_tokens"] == len(
        [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")])


def test_the_usage_chunk_asked_for_is_kept(splice_node: SpliceNode) -> None:
    response, raw = stream(splice_node.node, "/v1/chat/completions", {
        "model": "oa-model", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "hi"}]})
    chunks = [json.loads(line[6:]) for line in raw.decode().split("\n")
              if line.startswith("data: ") and line != "data: [DONE]"]
    usage = [c["usage"] for c in chunks if c.get("usage")]
    record = ended(splice_node.node, response)
    assert len(usage) == 1 and record["state"] == "completed"
    assert (usage[0]["prompt_tokens"], usage[0]["completion_tokens"]) == (record["prompt_tokens"],
                                                                           record["completion_tokens"])


def test_an_ollama_stream_names_the_model_as_the_caller_did(splice_node: SpliceNode) -> None:
    s = splice_node
    response, raw = stream(s.node, "/api/chat", {"model": "ol-model", "messages": [{"role": "user", "content": "hi"}]})
    assert (agent(s.ollama_engine) == SPLICE_AGENT) == (s.path == "splice")
    lines = [json.loads(line) for line in raw.decode().splitlines() if line]
    assert lines[-1]["done"] is True
    assert {line["model"] for line in lines} == {"ol-model"}, "the engine's 'ol-model:latest' is renamed in each line"
    record = ended(s.node, response)
    assert record["state"] == "completed"
    assert (record["prompt_tokens"], record["completion_tokens"]) == (lines[-1]["prompt_eval_count"],
                                                                      lines[-1]["eval_count"])


def test_a_translated_stream_keeps_aiohttps_path(splice_node: SpliceNode) -> None:
    s = splice_node
    response, raw = stream(s.node, "/api/chat", {"model": "oa-model", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200 and json.loads(raw.decode().splitlines()[-1])["done"] is True
    assert agent(s.openai_engine) != SPLICE_AGENT


def test_a_whole_answer_keeps_aiohttps_path(splice_node: SpliceNode) -> None:
    s = splice_node
    answer = httpx.post(s.node.url + "/v1/chat/completions", timeout=30, trust_env=False, json={
        "model": "oa-model", "messages": [{"role": "user", "content": "hi"}]}).json()
    assert answer["model"] == "oa-model" and answer["usage"]["completion_tokens"] > 0
    assert agent(s.openai_engine) != SPLICE_AGENT


def raw_request(node: NodeProc, body: dict, version: str = "HTTP/1.1") -> socket.socket:
    data = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", int(node.url.rsplit(":", 1)[1])), timeout=30)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(f"POST /v1/chat/completions {version}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
    return sock


def read_to_close(sock: socket.socket, size: int) -> bytes:
    received = bytearray()
    while piece := sock.recv(size):
        received += piece
    sock.close()
    return bytes(received)


def test_a_slow_caller_gets_the_whole_of_a_fast_stream(splice_node: SpliceNode) -> None:
    s = splice_node
    s.openai_engine.config(reply_tokens=5000)  # unpaced: the engine outruns a caller reading 1 KB at a time
    try:
        sock = raw_request(s.node, {"model": "oa-model", "stream": True,
                                    "messages": [{"role": "user", "content": "long"}]})
        raw = read_to_close(sock, 1024)
    finally:
        s.openai_engine.config(reply_tokens=12)
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n")[0] and b"transfer-encoding: chunked" in head.lower()
    decoded = dechunk(body)
    events = [e.strip() for e in decoded.split(b"\n\n") if e.strip()]
    assert events[-1] == b"data: [DONE]"
    job_id = next(line.split(b": ")[1].decode() for line in head.split(b"\r\n")
                  if line.lower().startswith(b"x-pairwise-job"))
    record = wait_until(lambda: (j := job(s.node, job_id)) and j["state"] != "running" and j, what="the job to end")
    assert record["state"] == "completed" and record["completion_tokens"] == 5000
    assert len([e for e in events if b'"content"' in e]) >= 5000


def test_an_http_1_0_caller_gets_the_stream_unframed(splice_node: SpliceNode) -> None:
    s = splice_node
    raw = read_to_close(raw_request(s.node, {"model": "oa-model", "stream": True,
                                             "messages": [{"role": "user", "content": "hi"}]}, "HTTP/1.0"), 65536)
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n")[0] and b"transfer-encoding" not in head.lower()
    assert body.startswith(b"data: {") and body.endswith(b"data: [DONE]\n\n")


def dechunk(body: bytes) -> bytes:
    out, pos = bytearray(), 0
    while True:
        nl = body.index(b"\r\n", pos)
        size = int(body[pos:nl], 16)
        if size == 0:
            return bytes(out)
        out += body[nl + 2:nl + 2 + size]
        assert body[nl + 2 + size:nl + 4 + size] == b"\r\n"
        pos = nl + 4 + size
