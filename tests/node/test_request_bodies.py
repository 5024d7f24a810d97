"""Large request engine_node reach the engine whole, however they arrive; engine_node over the limit get 413."""

from __future__ import annotations

import json

import pytest

from tests.node.conftest import EngineNode
from tests.support.rawhttp import Mode, socket_post, urllib_post

SIZES = {"300KB": 300 * 1024, "1MB": 1024 * 1024, "2MB": 2 * 1024 * 1024}
LIMIT = 8 * 1024 * 1024  # the default max_body_bytes


def prompt_of(size: int) -> str:
    words = "long context is why one rents a gpu "
    return (words * (size // len(words) + 1))[:size]


def chat_body(model: str, prompt: str) -> bytes:
    return json.dumps({"model": model, "stream": False, "messages": [{"role": "user", "content": prompt}]}).encode()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("mode", ["one_write", "pieces", "chunked"])
def test_raw_socket_prompt_reaches_the_engine_whole(engine_node: EngineNode, size: str, mode: Mode) -> None:
    prompt = prompt_of(SIZES[size])
    status, answer = socket_post(engine_node.node.url, "/api/chat", chat_body("oa-model", prompt), mode)
    assert status == 200, answer
    assert answer["done"] is True and answer["model"] == "oa-model"
    reached = engine_node.openai_engine.stats()["last_body"]
    assert reached["messages"][0]["content"] == prompt


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("chunked", [False, True], ids=["one_request", "chunked"])
def test_urllib_prompt_reaches_the_engine_whole(engine_node: EngineNode, size: str, chunked: bool) -> None:
    prompt = prompt_of(SIZES[size])
    status, answer = urllib_post(engine_node.node.url, "/v1/chat/completions", chat_body("ol-model", prompt), chunked)
    assert status == 200, answer
    assert answer["choices"][0]["message"]["content"]
    assert engine_node.ollama_engine.stats()["last_body"]["messages"][0]["content"] == prompt


@pytest.mark.parametrize("mode", ["one_write", "chunked"])
def test_body_over_the_limit_is_413_in_the_callers_shape(engine_node: EngineNode, mode: Mode) -> None:
    before = engine_node.openai_engine.stats()["inferences"]
    body = chat_body("oa-model", prompt_of(LIMIT + 1024))
    status, answer = socket_post(engine_node.node.url, "/v1/chat/completions", body, mode)
    assert status == 413
    assert "limit" in answer["error"]["message"]  # OpenAI's error shape
    status, answer = socket_post(engine_node.node.url, "/api/chat", body, mode)
    assert status == 413 and "limit" in answer["error"]  # Ollama's
    assert engine_node.openai_engine.stats()["inferences"] == before  # nothing was sent on


@pytest.mark.parametrize("depth", [129, 100_000])
def test_json_nested_too_deep_is_400(engine_node: EngineNode, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    body = ('{"model": "oa-model", "messages": [{"role": "user", "content": "hi"}], "x": ' + nested + "}").encode()
    status, answer = socket_post(engine_node.node.url, "/v1/chat/completions", body, "one_write")
    assert status == 400 and "nests deeper" in answer["error"]["message"]
