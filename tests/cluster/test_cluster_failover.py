"""Three node processes: alpha and gamma both serve "shared", beta routes between them.

alpha has more slots (capacity 8) than gamma (capacity 2), so with equal load
beta tries alpha first; that makes each failover path below deterministic.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import FAST, job, jobs, pair, row, wait_models, wait_online

CHAT = {"model": "shared", "messages": [{"role": "user", "content": "hi"}]}


@dataclass
class Trio:
    a: NodeProc
    b: NodeProc
    c: NodeProc
    engine_a: TinyProc
    engine_c: TinyProc


def make_trio(root: Path, beta_env: dict[str, str], procs: list[TinyProc | NodeProc]) -> Trio:
    """Starts the processes, appending each to ``procs`` (the caller stops them)."""
    engine_a = TinyProc("--api", "openai", "--model", "shared")
    procs.append(engine_a)
    engine_c = TinyProc("--api", "ollama", "--model", "shared:latest")
    procs.append(engine_c)
    a, b, c = (NodeProc(root / f"home-{name}", name, env=env)
               for name, env in (("alpha", FAST), ("beta", beta_env), ("gamma", FAST)))
    for node in (a, b, c):
        procs.append(node.start())
    a.cli("engines", "add", "ea", "--url", engine_a.url, "--api", "openai", "--capacity", "8")
    c.cli("engines", "add", "ec", "--url", engine_c.url, "--api", "ollama", "--capacity", "2")
    pair(b, a)
    pair(b, c)
    pair(c, a)
    wait_models(b, a, "shared")
    wait_models(b, c, "shared:latest")
    return Trio(a, b, c, engine_a, engine_c)


@contextmanager
def running_trio(root: Path, beta_env: dict[str, str]) -> Iterator[Trio]:
    procs: list[TinyProc | NodeProc] = []
    try:
        yield make_trio(root, beta_env, procs)
    finally:
        for proc in reversed(procs):
            proc.stop()


@pytest.fixture(scope="module")
def trio(tmp_path_factory: pytest.TempPathFactory, data_path: str) -> Iterator[Trio]:
    """Shared by the tests below that leave it as they found it (engines healthy, nothing in flight)."""
    with running_trio(tmp_path_factory.mktemp("trio"), FAST) as made:
        yield made


def served_by(node: NodeProc, **extra: object) -> str:
    response = httpx.post(f"{node.url}/v1/chat/completions", json={**CHAT, **extra}, timeout=30)
    assert response.status_code == 200, response.text
    return response.headers["x-pairwise-node"]


def test_least_loaded_owner_in_the_cluster_wins(trio: Trio) -> None:
    response = httpx.post(f"{trio.b.url}/v1/chat/completions", json=CHAT, timeout=30)
    assert response.headers["x-pairwise-node"] == "alpha"  # equal load: more free slots
    # The third node lists beta's relayed job once, as beta (its origin) tells it.
    job_id = response.headers["x-pairwise-job"]
    seen = wait_until(lambda: (j := job(trio.c, job_id)) and j["state"] == "completed" and j,
                      what="gamma to list beta's job")
    assert (seen["origin_node"], seen["serving_node"]) == ("beta", "alpha")
    assert [j["id"] for j in jobs(trio.c)].count(job_id) == 1
    trio.engine_a.config(tokens_per_s=4, reply_tokens=400)
    try:
        busy_alpha_sends_work_to_gamma(trio)
    finally:
        trio.engine_a.config(tokens_per_s=0, reply_tokens=12)
    wait_until(lambda: row(trio.b, trio.a)["in_flight"] == 0, what="alpha idle again")  # type: ignore[index]
    assert served_by(trio.b) == "alpha"


def busy_alpha_sends_work_to_gamma(trio: Trio) -> None:
    # Load seen from beta itself: its own request in flight at alpha.
    with httpx.stream("POST", f"{trio.b.url}/v1/chat/completions", json={**CHAT, "stream": True}) as slow:
        assert slow.headers["x-pairwise-node"] == "alpha"
        chunks = slow.iter_raw()  # kept: dropping the iterator would close the stream
        next(chunks)
        assert served_by(trio.b) == "gamma"
    wait_until(lambda: row(trio.b, trio.a)["in_flight"] == 0, what="alpha idle again")  # type: ignore[index]
    # Load reported by alpha: a request from alpha's own caller, which beta learns by polling.
    with httpx.stream("POST", f"{trio.a.url}/v1/chat/completions", json={**CHAT, "stream": True}) as slow:
        chunks = slow.iter_raw()
        next(chunks)
        wait_until(lambda: row(trio.b, trio.a)["in_flight"] == 1, what="beta to see alpha busy")  # type: ignore[index]
        assert served_by(trio.b) == "gamma"


def test_owner_refusing_before_first_byte_fails_over(trio: Trio) -> None:
    trio.engine_a.config(fail_mode="500")
    try:
        refused_then_served(trio)
    finally:
        trio.engine_a.config(fail_mode=None)


def refused_then_served(trio: Trio) -> None:
    client = openai.OpenAI(base_url=f"{trio.b.url}/v1", api_key="unused", max_retries=0)
    reply = client.chat.completions.with_raw_response.create(**CHAT)  # type: ignore[call-overload]
    assert reply.headers["x-pairwise-node"] == "gamma" and reply.parse().choices[0].message.content
    job_id = reply.headers["x-pairwise-job"]
    on_b = job(trio.b, job_id)
    assert on_b is not None and on_b["serving_node"] == "gamma" and on_b["state"] == "completed"
    # alpha tried and failed it; the origin's record (served by gamma) is the one every node ends with.
    wait_until(lambda: (j := job(trio.a, job_id)) and j["serving_node"] == "gamma" and j["state"] == "completed",
               what="alpha to show the job as beta saw it")
    assert trio.engine_c.stats()["requests"] >= 1


def test_killed_owner_fails_over_and_shows_offline(tmp_path: Path, data_path: str) -> None:
    # beta polls rarely here, so it still believes alpha is up when the request comes:
    # the relay itself must find alpha dead and fail over.
    with running_trio(tmp_path, {"PAIRWISE_PEER_POLL_S": "30"}) as trio:
        killed_mid_test(trio)


def killed_mid_test(trio: Trio) -> None:
    trio.engine_a.config(tokens_per_s=4, reply_tokens=400)
    client = openai.OpenAI(base_url=f"{trio.b.url}/v1", api_key="unused", max_retries=0)
    stream = client.chat.completions.create(**CHAT, stream=True)  # type: ignore[call-overload]
    first = next(iter(stream))
    assert first.choices is not None
    trio.a.kill()  # mid-stream: no retry after the first byte, the caller sees the cut
    with pytest.raises(openai.APIError):
        for _ in stream:
            pass

    reply = client.chat.completions.with_raw_response.create(**CHAT)  # type: ignore[call-overload]
    assert reply.headers["x-pairwise-node"] == "gamma" and reply.parse().choices[0].message.content
    assert wait_online(trio.b, trio.a, online=False)["online"] is False
    assert wait_online(trio.c, trio.a, online=False)["online"] is False
    models = [m["id"] for m in httpx.get(f"{trio.b.url}/v1/models").json()["data"]]
    assert models == ["shared:latest"]
    cut = next(j for j in jobs(trio.b) if j["serving_node"] == "alpha")
    assert cut["state"] == "failed" and "stream" in cut["error"]
