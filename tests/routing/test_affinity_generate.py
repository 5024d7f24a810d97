"""Affinity for prompts without messages (issue 23): Ollama's /api/generate turns that send back the
last answer's `context`, and OpenAI completions that repeat a long prompt's beginning, stay on the copy
that served the first while another copy is idle. Real node processes, real `ollama` and `openai`
clients, two tiny Ollama engines."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import ollama
import openai

from app.harness import wait_until
from tests.routing.test_affinity_and_refusal import engine_in_flight, last_job

MODEL = "m:latest"
DOCUMENT = "The quick brown fox jumps over the lazy dog. " * 60  # about 2,700 bytes: a shared prefix worth keeping


@contextmanager
def first_busy(node: Any, first: Any) -> Iterator[None]:
    """The first copy held busy by another request, so the next one goes to the second."""
    first.config(first_byte_delay_s=60)

    def hold() -> None:
        try:
            httpx.post(node.url + "/api/generate", timeout=15, trust_env=False,
                       json={"model": MODEL, "prompt": "other", "stream": False})
        except httpx.TimeoutException:
            pass  # the caller gives up: the node lets go of the engine

    holder = threading.Thread(target=hold)
    holder.start()
    wait_until(lambda: engine_in_flight(node, "first") == 1, 30, "the first copy to be busy")
    try:
        yield
    finally:
        holder.join()
        first.config(first_byte_delay_s=0)
        wait_until(lambda: engine_in_flight(node, "first") == 0, 30, "the first copy to be idle again")


def two_engines(node_factory: Any, tiny_factory: Any) -> tuple[Any, Any]:
    first = tiny_factory("--api", "ollama", "--model", MODEL)
    second = tiny_factory("--api", "ollama", "--model", MODEL)
    node = node_factory("alpha").start()
    for name, engine in (("first", first), ("second", second)):
        node.cli("engines", "add", name, "--url", engine.url, "--api", "ollama", "--capacity", "8")
    return node, first


def test_generate_turns_with_context_stay_on_the_first_turns_copy(node_factory: Any, tiny_factory: Any) -> None:
    node, first = two_engines(node_factory, tiny_factory)
    client = ollama.Client(host=node.url)
    with first_busy(node, first):
        reply = client.generate(model=MODEL, prompt="turn 1", options={"num_predict": 3})
        assert last_job(node)["engine"] == "second" and reply.context
    for turn in range(2, 6):
        stream = turn % 2 == 0  # the answer's context is read from a stream's last line too
        if stream:
            parts = list(client.generate(model=MODEL, prompt=f"turn {turn}", context=reply.context, stream=True,
                                         options={"num_predict": 3}))
            reply = parts[-1]
        else:
            reply = client.generate(model=MODEL, prompt=f"turn {turn}", context=reply.context,
                                    options={"num_predict": 3})
        job = last_job(node)
        assert job["engine"] == "second" and "affinity" in job["route"], f"turn {turn}: {job}"
        assert reply.context
    # A new prompt, both copies idle, goes where load says: the first copy.
    client.generate(model=MODEL, prompt="something else", options={"num_predict": 3})
    assert last_job(node)["engine"] == "first"


def test_completions_repeating_a_long_prefix_go_to_its_copy(node_factory: Any, tiny_factory: Any) -> None:
    node, first = two_engines(node_factory, tiny_factory)
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)
    with first_busy(node, first):
        client.completions.create(model=MODEL, prompt=DOCUMENT + "Question: who jumps?", max_tokens=3)
        assert last_job(node)["engine"] == "second"
    for question in ("what colour is the fox?", "is the dog lazy?", "how many animals?"):
        raw = client.completions.with_raw_response.create(model=MODEL, prompt=DOCUMENT + "Question: " + question,
                                                          max_tokens=3)
        assert raw.parse().choices[0].text is not None
        job = last_job(node)
        assert job["engine"] == "second" and "affinity" in raw.headers["x-pairwise-route"], job
    # A short prompt shares no kept prefix: by load, the first copy.
    client.completions.create(model=MODEL, prompt="hello", max_tokens=3)
    assert last_job(node)["engine"] == "first"
