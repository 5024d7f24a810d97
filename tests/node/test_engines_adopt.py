"""Adopting an engine by its base URL as tools write it (with or without /v1), and a request sent the
moment the node has started, before its first look at a slow engine finished."""

from __future__ import annotations

import ollama
import openai
import pytest

from app.harness import NodeProc, TinyProc


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_engine_added_with_or_without_v1(node_factory: type[NodeProc], tiny_factory: type[TinyProc],
                                          suffix: str) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "oa-model")
    node = node_factory("alpha").start()
    out = node.cli("engines", "add", "t", "--url", tiny.url + suffix, "--api", "openai").stdout
    assert "models: oa-model" in out
    [engine] = node.cli_json("engines", "list")
    assert engine["url"] == tiny.url and engine["error"] is None
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0)
    assert client.chat.completions.create(model="oa-model", messages=[{"role": "user", "content": "hi"}]).choices
    assert tiny.stats()["last_headers"]  # the request reached the engine at its root + /v1/chat/completions


def test_request_right_after_start_waits_for_the_first_look_at_the_engines(
        node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "ollama", "--model", "slow:latest", "--first-byte-delay-s", "6")
    node = node_factory("alpha")
    node.cli("engines", "add", "slow", "--url", tiny.url + "/v1", "--api", "ollama")  # the node is not running
    node.start()
    # The node listens while its first look at the engine (answered 6 s later) is still pending...
    assert tiny.stats()["in_flight"] == 1
    # ...and a request sent now waits for that look instead of answering 404.
    reply = ollama.Client(host=node.url, timeout=60).chat(model="slow", messages=[{"role": "user", "content": "hi"}],
                                                          stream=False)
    assert reply.done and reply.message.content
    assert tiny.stats()["last_body"]["model"] == "slow:latest"
