"""The real openai client against an Ollama-API engine, at a node's front door and through a peer
relay: what reached the engine, field by field, and what came back, checked against the client's types."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import openai
import pytest
from openai.types import Completion, CreateEmbeddingResponse
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.node.conftest import Route
from tests.node.test_ollama_client_to_openai_engine import PNG, SCHEMA, WEATHER

USER: list[Any] = [{"role": "user", "content": "weather in Paris?"}]


def client(route: Route) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{route.url}/v1", api_key="unused", max_retries=0)


def reached(route: Route) -> dict[str, Any]:
    return dict(route.ollama_engine.stats()["last_body"])


def test_tools_and_tool_calls_whole(route: Route) -> None:
    reply = client(route).chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER])
    assert reached(route)["tools"] == [WEATHER]
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and reply.model == "ol-model"
    [call] = choice.message.tool_calls or []
    assert call.type == "function" and call.id and call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "tiny", "days": 1}


def test_tool_calls_streamed_as_deltas(route: Route) -> None:
    chunks = list(client(route).chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER],
                                                        stream=True))
    deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    assert deltas and all(d.index == 0 for d in deltas) and deltas[0].id and deltas[0].function
    assert deltas[0].function.name == "get_weather"
    arguments = "".join((d.function.arguments or "") if d.function else "" for d in deltas)
    assert json.loads(arguments) == {"city": "tiny", "days": 1}
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["tool_calls"]


def test_tool_results_reach_the_engine_named_by_their_calls(route: Route) -> None:
    messages: list[Any] = [
        *USER,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": '{"city": "Rome"}'}}]},
        {"role": "tool", "tool_call_id": "call_b", "content": "noon"},
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
    ]
    reply = client(route).chat.completions.create(model="ol-model", messages=messages, tools=[WEATHER])
    assert reply.choices[0].message.content
    sent = reached(route)["messages"]
    assert sent[1]["tool_calls"] == [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                                     {"function": {"name": "get_time", "arguments": {"city": "Rome"}}}]
    assert sent[2] == {"role": "tool", "content": "noon", "tool_name": "get_time"}
    assert sent[3] == {"role": "tool", "content": "sunny", "tool_name": "get_weather"}


def test_image_data_urls_become_images_and_remote_urls_are_refused(route: Route) -> None:
    b64 = base64.b64encode(PNG).decode()
    content: list[Any] = [{"type": "text", "text": "what is this?"},
                          {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}]
    client(route).chat.completions.create(model="ol-model", messages=[{"role": "user", "content": content}])
    assert reached(route)["messages"] == [{"role": "user", "content": "what is this?", "images": [b64]}]
    before = route.ollama_engine.stats()["inferences"]
    remote: list[Any] = [{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]
    with pytest.raises(openai.BadRequestError, match="never fetched") as raised:
        client(route).chat.completions.create(model="ol-model", messages=[{"role": "user", "content": remote}])
    assert raised.value.param == "messages[0].content[0].image_url"
    assert route.ollama_engine.stats()["inferences"] == before


def test_response_formats(route: Route) -> None:
    fmt: Any = {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA, "strict": True}}
    reply = client(route).chat.completions.create(model="ol-model", messages=USER, response_format=fmt)
    assert reached(route)["format"] == SCHEMA
    assert set(json.loads(reply.choices[0].message.content or "")) == {"name", "age", "tags"}
    client(route).chat.completions.create(model="ol-model", messages=USER, response_format={"type": "json_object"})
    assert reached(route)["format"] == "json"


def test_sampling_fields_become_options(route: Route) -> None:
    client(route).chat.completions.create(
        model="ol-model", messages=USER, temperature=0.3, top_p=0.9, seed=7, stop=["zz"], max_completion_tokens=5,
        presence_penalty=0.1, frequency_penalty=0.2, user="someone", extra_body={"top_k": 20})
    body = reached(route)
    assert body["options"] == {"temperature": 0.3, "top_p": 0.9, "seed": 7, "stop": ["zz"], "num_predict": 5,
                               "presence_penalty": 0.1, "frequency_penalty": 0.2, "top_k": 20}
    assert "user" not in body


@pytest.mark.parametrize(("extra", "field"), [
    ({"n": 2}, "n"),
    ({"tool_choice": {"type": "function", "function": {"name": "not_offered"}}, "tools": [WEATHER]}, "tool_choice"),
    ({"logit_bias": {"50256": -100}}, "logit_bias"),
])
def test_fields_that_cannot_cross_are_refused_by_name(route: Route, extra: dict[str, Any], field: str) -> None:
    before = route.ollama_engine.stats()["inferences"]
    with pytest.raises(openai.BadRequestError, match=f"'{field}' cannot be sent to an Ollama-API engine") as raised:
        client(route).chat.completions.create(model="ol-model", messages=USER, **extra)
    assert raised.value.param == field
    assert route.ollama_engine.stats()["inferences"] == before


def test_logprobs(route: Route) -> None:
    reply = client(route).chat.completions.create(model="ol-model", messages=USER, logprobs=True, top_logprobs=2)
    assert reached(route)["logprobs"] is True and reached(route)["top_logprobs"] == 2
    content = reply.choices[0].logprobs and reply.choices[0].logprobs.content
    assert content and len(content[0].top_logprobs) == 2
    completion = client(route).completions.create(model="ol-model", prompt="once", logprobs=2, max_tokens=3)
    legacy = completion.choices[0].logprobs
    assert legacy and legacy.tokens and len(legacy.tokens) == 3 and len(legacy.top_logprobs or []) == 3


def test_reasoning(route: Route) -> None:
    reply = client(route).chat.completions.create(model="ol-model", messages=USER, reasoning_effort="low")
    assert reached(route)["think"] == "low"
    assert getattr(reply.choices[0].message, "reasoning_content", None) == "the tiny model thinks it over"


def test_embedding_dimensions_and_base64(route: Route) -> None:
    emb = client(route).embeddings.create(model="ol-model", input=["a", "b"], dimensions=4)  # base64 by default
    assert reached(route)["dimensions"] == 4 and [len(d.embedding) for d in emb.data] == [4, 4]
    raw = httpx.post(f"{route.url}/v1/embeddings", json={"model": "ol-model", "input": "a", "encoding_format": "base64",
                                                         "dimensions": 4}).json()
    assert len(base64.b64decode(raw["data"][0]["embedding"])) == 4 * 4  # four little-endian float32


@pytest.mark.parametrize("model", ["ol-model", "oa-model"])
def test_usage_chunk_only_when_asked(route: Route, model: str) -> None:
    plain = list(client(route).chat.completions.create(model=model, messages=USER, stream=True))
    assert all(chunk.choices for chunk in plain), "a chunk without choices reached a caller that did not ask"
    assert all(chunk.choices[0].delta is not None for chunk in plain)
    asked = list(client(route).chat.completions.create(model=model, messages=USER, stream=True,
                                                       stream_options={"include_usage": True}))
    assert asked[-1].choices == [] and asked[-1].usage and asked[-1].usage.completion_tokens
    assert all(c.model == model for c in plain + asked)


@pytest.mark.parametrize("model", ["ol-model", "oa-model"])
def test_answers_match_the_clients_types(route: Route, model: str) -> None:
    url = f"{route.url}/v1"
    chat = httpx.post(f"{url}/chat/completions", timeout=30, json={"model": model, "messages": USER}).json()
    assert ChatCompletion.model_validate(chat).model == model
    if model == "oa-model":  # passed through from an OpenAI-API engine
        assert chat["system_fingerprint"] == "fp_tiny" and chat["choices"][0]["message"]["refusal"] is None
    text = httpx.post(f"{url}/chat/completions", timeout=30, json={"model": model, "messages": USER,
                                                                   "stream": True}).text
    for line in text.splitlines():
        if line.startswith("data: {"):
            assert ChatCompletionChunk.model_validate(json.loads(line[6:])).model == model
    completion = httpx.post(f"{url}/completions", timeout=30, json={"model": model, "prompt": "x"}).json()
    assert Completion.model_validate(completion).model == model
    emb = httpx.post(f"{url}/embeddings", timeout=30, json={"model": model, "input": "x"}).json()
    assert CreateEmbeddingResponse.model_validate(emb).model == model
