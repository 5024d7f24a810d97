"""Two node processes: a model only A serves, reached from B's front door, streaming; one job on both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import ollama
import openai
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import FAST, job, jobs, pair, row, wait_models


@dataclass
class Duo:
    a: NodeProc
    b: NodeProc


@pytest.fixture(scope="module")
def duo(tmp_path_factory: pytest.TempPathFactory, data_path: str) -> Iterator[Duo]:
    """alpha serves only-a (an OpenAI engine) and both-m; beta serves only-b (an Ollama engine) and both-m.

    Shared by the tests of this module (starting two nodes costs seconds); each test
    finds its own jobs by id.
    """
    root = tmp_path_factory.mktemp("duo")
    procs: list[TinyProc | NodeProc] = []
    try:
        on_a = TinyProc("--api", "openai", "--model", "only-a", "--model", "both-m")
        procs.append(on_a)
        on_b = TinyProc("--api", "ollama", "--model", "only-b:latest", "--model", "both-m:latest")
        procs.append(on_b)
        a = NodeProc(root / "home-alpha", "alpha", env=FAST)
        procs.append(a.start())
        b = NodeProc(root / "home-beta", "beta", env=FAST)
        procs.append(b.start())
        a.cli("engines", "add", "ta", "--url", on_a.url, "--api", "openai")
        b.cli("engines", "add", "tb", "--url", on_b.url, "--api", "ollama")
        pair(a, b)
        wait_models(b, a, "only-a", "both-m")
        wait_models(a, b, "only-b:latest")
        yield Duo(a, b)
    finally:
        for proc in reversed(procs):
            proc.stop()


def test_merged_inventory_lists_every_model_once(duo: Duo) -> None:
    for node in (duo.a, duo.b):
        tags = [m["name"] for m in httpx.get(f"{node.url}/api/tags").json()["models"]]
        # both-m is served on both nodes (as "both-m" and "both-m:latest", the same model): listed once.
        assert sorted(t.removesuffix(":latest") for t in tags) == ["both-m", "only-a", "only-b"], tags
        ids = [m["id"] for m in httpx.get(f"{node.url}/v1/models").json()["data"]]
        assert len(ids) == 3 and set(ids) == set(tags)
    listed = {n["name"]: n for n in duo.b.cli_json("nodes")}  # the CLI's --json, as users get it
    assert listed["beta"]["kind"] == "local" and listed["alpha"]["kind"] == "peer"
    alpha = listed["alpha"]
    assert alpha["online"] is True and alpha["id"] == duo.a.runtime["node_id"]
    assert sorted(alpha["models"]) == ["both-m", "only-a"] and alpha["in_flight"] == 0
    assert [e["name"] for e in alpha["engines"]] == ["ta"]
    assert "url" not in alpha["engines"][0], "engine URLs are not shared with peers"
    assert alpha["hardware"]["memory_gb"] and "os" in alpha


def test_openai_client_on_b_streams_from_a(duo: Duo) -> None:
    client = openai.OpenAI(base_url=f"{duo.b.url}/v1", api_key="unused", max_retries=0)
    chunks = list(client.chat.completions.create(
        model="only-a", messages=[{"role": "user", "content": "hello there"}], stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(chunks) > 3 and text.strip()
    assert any(c.choices and c.choices[0].finish_reason == "stop" for c in chunks)

    reply = client.chat.completions.with_raw_response.create(
        model="only-a", messages=[{"role": "user", "content": "hello there"}])
    assert reply.headers["x-pairwise-node"] == "alpha"
    assert reply.parse().choices[0].message.content == text


def test_ollama_client_on_b_streams_from_a(duo: Duo) -> None:
    client = ollama.Client(host=duo.b.url)
    parts = list(client.chat(model="only-a", messages=[{"role": "user", "content": "hello there"}], stream=True))
    assert len(parts) > 3 and parts[-1].done
    assert "".join(p.message.content or "" for p in parts).strip()
    generated = client.generate(model="only-a", prompt="hello", stream=False)
    assert generated.response.strip() and generated.done
    embedded = client.embed(model="only-a", input=["one", "two"])
    assert len(embedded.embeddings) == 2


def test_one_job_on_both_nodes_with_origin_and_serving_node(duo: Duo) -> None:
    with httpx.stream("POST", f"{duo.b.url}/v1/chat/completions", json={
            "model": "only-a", "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as response:
        assert response.status_code == 200
        job_id = response.headers["x-pairwise-job"]
        body = b"".join(response.iter_bytes())
    assert b"data: [DONE]" in body

    on_b = wait_until(lambda: (j := job(duo.b, job_id)) and j["state"] == "completed" and j, what="job on beta")
    on_a = wait_until(lambda: (j := job(duo.a, job_id)) and j["state"] == "completed" and j, what="job on alpha")
    for record in (on_a, on_b):
        assert record["origin_node"] == "beta" and record["origin_node_id"] == duo.b.runtime["node_id"]
        assert record["serving_node"] == "alpha" and record["serving_node_id"] == duo.a.runtime["node_id"]
        assert record["engine"] == "ta" and record["completion_tokens"]
    # One structured requester on both nodes: the origin node (on alpha from beta's pinned certificate)
    # and, without a key, the app's User-Agent marked unauthenticated.
    for record in (on_a, on_b):
        who = record["requester"]
        assert (who["node_id"], who["node_name"]) == (duo.b.runtime["node_id"], "beta")
        assert who["app"].startswith("python-httpx") and who["key"] is None and who["authenticated"] is False
    assert [j["id"] for j in jobs(duo.a)].count(job_id) == 1 and [j["id"] for j in jobs(duo.b)].count(job_id) == 1


def test_local_job_replicates_to_the_peer(duo: Duo) -> None:
    client = ollama.Client(host=duo.a.url)
    client.generate(model="only-a", prompt="hello", stream=False)
    mine = next(j for j in jobs(duo.a) if j["origin_node"] == "alpha")  # the newest job alpha originated
    seen = wait_until(lambda: (j := job(duo.b, mine["id"])) and j["state"] == "completed" and j,
                      what="alpha's job on beta")
    assert seen["origin_node"] == "alpha" and seen["serving_node"] == "alpha"
    assert row(duo.b, duo.a) is not None


def test_unknown_model_is_not_found_on_any_node(duo: Duo) -> None:
    client = openai.OpenAI(base_url=f"{duo.b.url}/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError, match="not found on any node; available models: .*only-a, only-b"):
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])
