"""An upstream that sends one enormous line fails its stream at the line cap, both ways of translation
and passed through; the job is failed with the reason, and the node keeps serving others."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import job


@dataclass
class LongLines:
    node: NodeProc
    healthy: TinyProc


@pytest.fixture(scope="module")
def long_lines(tmp_path_factory: pytest.TempPathFactory, data_path: str) -> Iterator[LongLines]:
    root: Path = tmp_path_factory.mktemp("long-lines")
    procs: list[TinyProc | NodeProc] = []
    try:
        procs.append(oa := TinyProc("--api", "openai", "--model", "oa-long", "--fail-mode", "long_line"))
        procs.append(ol := TinyProc("--api", "ollama", "--model", "ol-long:latest", "--fail-mode", "long_line"))
        procs.append(ok := TinyProc("--api", "ollama", "--model", "fine:latest"))
        procs.append(node := NodeProc(root / "home", "alpha").start())
        for name, tiny, api in (("oa", oa, "openai"), ("ol", ol, "ollama"), ("ok", ok, "ollama")):
            node.cli("engines", "add", name, "--url", tiny.url, "--api", api)
        yield LongLines(node, ok)
    finally:
        for proc in reversed(procs):
            proc.stop()


@pytest.mark.parametrize("model", ["oa-long", "ol-long"])
@pytest.mark.parametrize("path", ["/api/chat", "/v1/chat/completions"])
def test_a_50_mb_line_fails_the_stream_and_the_job(long_lines: LongLines, model: str, path: str) -> None:
    url = long_lines.node.url
    others: list[int] = []

    def small_requests() -> None:  # another caller, on a healthy engine, while the long line arrives
        for _ in range(3):
            others.append(httpx.post(f"{url}/api/generate", timeout=30, json={
                "model": "fine", "prompt": "hi", "stream": False}).status_code)

    other = threading.Thread(target=small_requests)
    with httpx.stream("POST", f"{url}{path}", timeout=60, json={
            "model": model, "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as response:
        other.start()
        assert response.status_code == 200
        job_id = response.headers["x-pairwise-job"]
        lines = [line for line in response.iter_lines() if line.strip()]
    other.join(60)
    assert others == [200, 200, 200]
    parsed = [json.loads(line.removeprefix("data: ")) for line in lines]  # no half line reached the caller
    last = parsed[-1]
    message = last["error"]["message"] if path.startswith("/v1/") else last["error"]
    assert "line longer than 1048576 bytes" in message
    record = wait_until(lambda: (j := job(long_lines.node, job_id)) and j["state"] != "running" and j,
                        what="the job to finish")
    assert record["state"] == "failed" and "line longer than" in record["error"]
