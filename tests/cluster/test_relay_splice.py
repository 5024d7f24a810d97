"""A peer's relayed pass-through streams on the splice's connections (``cluster/warm_splice.py``).

Three node processes: alpha serves the engines; beta (the splice, the default) and gamma
(``PAIRWISE_SPLICE=off``: aiohttp's client) are paired with it and serve nothing, so every request
sent to their front doors is relayed to alpha over mutual TLS. The same requests through both give
the same bytes, usage and job record; beta's relay pool says its streams went on the splice, gamma's
that none did. The pool's own rules on both clients: tests/cluster/test_warm_pool.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import FAST, api, job, pair, wait_models


@dataclass
class Trio:
    alpha: NodeProc
    spliced: NodeProc  # beta
    plain: NodeProc  # gamma, PAIRWISE_SPLICE=off


@pytest.fixture(scope="module")
def trio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trio]:
    root: Path = tmp_path_factory.mktemp("relay-splice")
    procs: list[TinyProc | NodeProc] = []
    try:
        oa = TinyProc("--api", "openai", "--model", "oa-model")
        procs.append(oa)
        ol = TinyProc("--api", "ollama", "--model", "ol-model:latest")
        procs.append(ol)
        alpha = NodeProc(root / "home-alpha", "alpha", env=FAST)
        procs.append(alpha.start())
        beta = NodeProc(root / "home-beta", "beta", env=FAST)
        procs.append(beta.start())
        gamma = NodeProc(root / "home-gamma", "gamma", env={**FAST, "PAIRWISE_SPLICE": "off"})
        procs.append(gamma.start())
        alpha.cli("engines", "add", "oa", "--url", oa.url, "--api", "openai")
        alpha.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama")
        for relaying in (beta, gamma):
            pair(alpha, relaying)
            wait_models(relaying, alpha, "oa-model", "ol-model:latest")
        yield Trio(alpha, beta, gamma)
    finally:
        for proc in reversed(procs):
            proc.stop()


def relay_pool(node: NodeProc, peer: NodeProc) -> dict[str, Any]:
    peers = api(node, "GET", "/peers")["peers"]
    found = next(p for p in peers if p["id"] == peer.runtime["node_id"])
    return dict(found["relay_pool"])


def send(node: NodeProc, path: str, body: dict[str, Any]) -> tuple[httpx.Response, bytes]:
    with httpx.Client(timeout=30, trust_env=False) as client, client.stream("POST", node.url + path, json=body) as r:
        return r, r.read()


# What differs between two answers to the same prompt: the engine's answer id and the clock (OpenAI's
# "created", Ollama's "created_at" and durations). Everything else must be the same byte for byte.
VARYING = re.compile(rb'"(id|created|created_at|[a-z_]*duration)":\s*("[^"]*"|\d+)')

# The job record's fields that do not name the node the caller asked (beta or gamma) or the time.
SAME_FIELDS = ("model", "api", "serving_node", "serving_node_id", "engine", "state", "prompt_tokens",
               "completion_tokens", "error", "off_lan", "rented_node", "cost_usd", "route")


def finished(node: NodeProc, response: httpx.Response) -> dict[str, Any]:
    job_id = response.headers["X-Pairwise-Job"]
    return dict(wait_until(lambda: (j := job(node, job_id)) and j["state"] != "running" and j, what="the job to end"))


STREAMS = [
    ("/v1/chat/completions", {"model": "oa-model", "stream": True, "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/chat/completions", {"model": "oa-model", "stream": True, "stream_options": {"include_usage": True},
                              "messages": [{"role": "user", "content": "tell me more"}]}),
    ("/api/chat", {"model": "ol-model", "messages": [{"role": "user", "content": "hi"}]}),
    ("/api/chat", {"model": "oa-model", "messages": [{"role": "user", "content": "hi"}]}),  # translated at alpha
]


def test_a_relayed_stream_on_the_splice_is_the_same_as_on_aiohttps_client(trio: Trio) -> None:
    before = relay_pool(trio.spliced, trio.alpha)["spliced"]
    for path, body in STREAMS:
        answers = {}
        for node in (trio.spliced, trio.plain):
            response, raw = send(node, path, body)
            assert response.status_code == 200, raw
            record = finished(node, response)
            assert record["state"] == "completed" and record["serving_node"] == "alpha"
            assert record["completion_tokens"] > 0
            answers[node.name] = (VARYING.sub(rb'"\1":0', raw), {f: record[f] for f in SAME_FIELDS},
                                  response.headers["content-type"])
        assert answers["beta"] == answers["gamma"], path
    # The usage chunk the caller asked for reaches it, and matches the job's count.
    response, raw = send(trio.spliced, *STREAMS[1])
    chunks = [json.loads(line[6:]) for line in raw.decode().split("\n") if line.startswith("data: {")]
    usage = [c["usage"] for c in chunks if c.get("usage")]
    record = finished(trio.spliced, response)
    assert len(usage) == 1 and (usage[0]["prompt_tokens"], usage[0]["completion_tokens"]) == (
        record["prompt_tokens"], record["completion_tokens"])
    # Which client carried them: beta's pool counts its spliced streams; gamma's carried none so.
    assert relay_pool(trio.spliced, trio.alpha)["spliced"] == before + len(STREAMS) + 1
    assert relay_pool(trio.plain, trio.alpha)["spliced"] == 0


def test_a_whole_answer_keeps_aiohttps_client(trio: Trio) -> None:
    before = relay_pool(trio.spliced, trio.alpha)["spliced"]
    answer = httpx.post(trio.spliced.url + "/v1/chat/completions", timeout=30, trust_env=False, json={
        "model": "oa-model", "messages": [{"role": "user", "content": "hi"}]}).json()
    assert answer["model"] == "oa-model" and answer["usage"]["completion_tokens"] > 0
    assert relay_pool(trio.spliced, trio.alpha)["spliced"] == before
