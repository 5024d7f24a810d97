"""Failover before the first byte, never after; a caller leaving mid-stream cancels upstream."""

from __future__ import annotations

import socket

import httpx
import ollama
import openai
import pytest

from app.harness import NodeProc, TinyProc, wait_until

pytestmark = pytest.mark.usefixtures("data_path")  # each test on the splice and on aiohttp


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def jobs(node: NodeProc) -> list[dict]:
    return node.cli_json("jobs")


@pytest.fixture
def pair_of_engines(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> tuple[NodeProc, TinyProc, TinyProc]:
    first = tiny_factory("--api", "openai", "--model", "same")
    second = tiny_factory("--api", "ollama", "--model", "same:latest")
    node = node_factory("fo").start()
    # capacity 1 on the first makes the ranking deterministic: the idle first engine is tried first.
    node.cli("engines", "add", "first", "--url", first.url, "--api", "openai", "--capacity", "1")
    node.cli("engines", "add", "second", "--url", second.url, "--api", "ollama", "--capacity", "8")
    return node, first, second


def chat(node: NodeProc, **extra: object) -> openai.types.chat.ChatCompletion:
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    return client.chat.completions.create(model="same", messages=[{"role": "user", "content": "hi"}], **extra)


def test_dead_engine_fails_over(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    doomed = tiny_factory("--api", "openai", "--model", "m1")
    live = tiny_factory("--api", "openai", "--model", "m1")
    node = node_factory("fo-dead").start()
    # Equal load: the first engine added is tried first, so the dead one is always tried.
    node.cli("engines", "add", "doomed", "--url", doomed.url, "--api", "openai")
    node.cli("engines", "add", "live", "--url", live.url, "--api", "openai")
    assert [e["models"] for e in node.cli_json("engines", "list")] == [["m1"], ["m1"]]
    doomed.stop()  # it knew the model, then died: its list stays until the next refresh
    served_before = live.stats()["requests"]
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model="m1", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content
    assert live.stats()["requests"] == served_before + 1
    assert [(j["engine"], j["state"]) for j in jobs(node)] == [("live", "completed")]


def test_500_before_first_byte_fails_over(pair_of_engines: tuple[NodeProc, TinyProc, TinyProc]) -> None:
    node, first, second = pair_of_engines
    first.config(fail_mode="500")
    before = first.stats()["requests"], second.stats()["requests"]
    reply = chat(node)
    assert reply.choices[0].message.content
    assert (first.stats()["requests"], second.stats()["requests"]) == (before[0] + 1, before[1] + 1)
    assert jobs(node)[0]["engine"] == "second"


def test_no_retry_after_first_byte(pair_of_engines: tuple[NodeProc, TinyProc, TinyProc]) -> None:
    node, first, second = pair_of_engines
    first.config(fail_mode="cut", cut_after_chunks=3)
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    second_before = second.stats()["requests"]
    received = []
    with pytest.raises(openai.APIError):
        for chunk in client.chat.completions.create(model="same", messages=[{"role": "user", "content": "hi"}],
                                                    stream=True):
            received.append(chunk)
    assert received, "the caller saw the chunks sent before the cut"
    assert second.stats()["requests"] == second_before, "never retried after the first byte"
    job = wait_until(lambda: next((j for j in jobs(node) if j["state"] != "running"), None), what="job to end")
    assert job["state"] == "failed" and "upstream" in job["error"]


def test_caller_leaving_mid_stream_cancels_upstream(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    slow = tiny_factory("--api", "openai", "--model", "slow", "--tokens-per-s", "5")
    slow.config(reply_tokens=200)
    node = node_factory("fo-cancel").start()
    node.cli("engines", "add", "slow", "--url", slow.url, "--api", "openai")
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", f"{node.url}/v1/chat/completions",
                           json={"model": "slow", "stream": True, "messages": [{"role": "user", "content": "x"}]}) as r:
            assert r.status_code == 200
            next(r.iter_raw())
    wait_until(lambda: jobs(node)[0]["state"] == "cancelled", what="job cancelled")
    wait_until(lambda: slow.stats()["in_flight"] == 0, what="upstream request closed")


def test_first_byte_timeout_is_per_engine(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    hanging = tiny_factory("--api", "openai", "--model", "m2")
    live = tiny_factory("--api", "openai", "--model", "m2")
    node = node_factory("fo-hang").start()
    node.cli("engines", "add", "hanging", "--url", hanging.url, "--api", "openai", "--first-byte-timeout-s", "0.5")
    node.cli("engines", "add", "live", "--url", live.url, "--api", "openai")
    hanging.config(fail_mode="hang")
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model="m2", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content
    assert [(j["engine"], j["state"]) for j in jobs(node)] == [("live", "completed")]
    assert node.cli_json("engines", "list")[0]["first_byte_timeout_s"] == 0.5


def test_keep_alive_comments_are_not_a_first_byte(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    """An engine that sends only SSE comments (": ping", as llama-cpp-python's server does while it reads
    a long prompt) has not answered: its first-byte budget still runs out and the request fails over."""
    pinging = tiny_factory("--api", "openai", "--model", "m3")
    live = tiny_factory("--api", "openai", "--model", "m3")
    node = node_factory("fo-ping").start()
    node.cli("engines", "add", "pinging", "--url", pinging.url, "--api", "openai", "--first-byte-timeout-s", "1")
    node.cli("engines", "add", "live", "--url", live.url, "--api", "openai")
    pinging.config(fail_mode="ping_then_hang")
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    chunks = list(client.chat.completions.create(model="m3", messages=[{"role": "user", "content": "hi"}],
                                                 stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert pinging.stats()["inferences"] == 1  # it was tried first, and sent its comment
    assert [(j["engine"], j["state"]) for j in jobs(node)] == [("live", "completed")]


@pytest.mark.parametrize("engine_api", ["openai", "ollama"])
def test_an_engine_that_drops_the_connection_after_its_final_chunk_gave_a_whole_answer(
        node_factory: type[NodeProc], tiny_factory: type[TinyProc], engine_api: str) -> None:
    """The final chunk ([DONE], or done: true) arrived, then the engine closed without ending the chunked
    body: both clients get the whole answer without an error, and the job is completed, not failed."""
    engine = tiny_factory("--api", engine_api, "--model", "same:latest")
    engine.config(fail_mode="no_terminator")
    node = node_factory("dropper").start()
    node.cli("engines", "add", "dropper", "--url", engine.url, "--api", engine_api)
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    chunks = list(client.chat.completions.create(model="same", messages=[{"role": "user", "content": "hi"}],
                                                 stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert any(c.choices and c.choices[0].finish_reason for c in chunks)
    parts = list(ollama.Client(host=node.url).chat(model="same", messages=[{"role": "user", "content": "hi"}],
                                                   stream=True))
    assert parts[-1].done and "".join(p.message.content or "" for p in parts)
    done = wait_until(lambda: [j for j in jobs(node) if j["state"] != "running"] if len(
        [j for j in jobs(node) if j["state"] != "running"]) == 2 else None, what="both jobs to end")
    assert [j["state"] for j in done] == ["completed", "completed"], done
    # Cut before the final chunk, the same engine's stream is still a failure the caller is told of.
    engine.config(fail_mode="cut", cut_after_chunks=2)
    with pytest.raises(openai.APIError):
        list(client.chat.completions.create(model="same", messages=[{"role": "user", "content": "hi"}], stream=True))
