"""The real ollama client against an OpenAI-API engine (the path a rented GPU is used through),
at a node's front door and through a peer relay: what reached the engine, field by field, and what
came back, checked against the client's own types."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import ollama
import pytest

from tests.node.conftest import Route

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                   "required": ["city"]}}}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                           "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["name", "age", "tags"]}
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


def client(route: Route) -> ollama.Client:
    return ollama.Client(host=route.url, timeout=60)


def reached(route: Route) -> dict:
    return route.openai_engine.stats()["last_body"]


@pytest.mark.parametrize("stream", [False, True])
def test_tools_and_tool_calls(route: Route, stream: bool) -> None:
    messages = [{"role": "user", "content": "weather in Paris?"}]
    if stream:
        parts = list(client(route).chat(model="oa-model", messages=messages, tools=[WEATHER], stream=True))
        calls = [c for p in parts for c in p.message.tool_calls or []]
        assert parts[-1].done and parts[-1].done_reason == "stop"
    else:
        reply = client(route).chat(model="oa-model", messages=messages, tools=[WEATHER])
        calls = list(reply.message.tool_calls or [])
        assert reply.model == "oa-model"
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [("get_weather", {"city": "tiny", "days": 1})]
    body = reached(route)
    assert body["tools"] == [WEATHER]


def test_tool_results_reach_the_engine_with_the_ids_of_their_calls(route: Route) -> None:
    messages = [
        {"role": "user", "content": "weather in Paris and Rome?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "get_time", "arguments": {"city": "Rome"}}}]},
        {"role": "tool", "tool_name": "get_time", "content": "noon"},
        {"role": "tool", "tool_name": "get_weather", "content": "sunny"},
    ]
    reply = client(route).chat(model="oa-model", messages=messages, tools=[WEATHER])
    assert reply.message.content
    sent = reached(route)["messages"]
    calls = sent[1]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_weather", "get_time"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"city": "Paris"}, {"city": "Rome"}]
    # content "" stays "" (llama.cpp's server refuses a null one)
    assert all(c["type"] == "function" and c["id"] for c in calls) and sent[1]["content"] == ""
    assert sent[2] == {"role": "tool", "content": "noon", "tool_call_id": calls[1]["id"]}
    assert sent[3] == {"role": "tool", "content": "sunny", "tool_call_id": calls[0]["id"]}


def test_images_become_data_urls(route: Route) -> None:
    client(route).chat(model="oa-model", messages=[{"role": "user", "content": "what is this?", "images": [PNG]}])
    [message] = reached(route)["messages"]
    assert message["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}]


def test_images_on_generate_are_refused_by_name(route: Route) -> None:
    with pytest.raises(ollama.ResponseError, match="'images' cannot be sent to an OpenAI-API engine") as raised:
        client(route).generate(model="oa-model", prompt="what is this?", images=[PNG])
    assert raised.value.status_code == 400


@pytest.mark.parametrize("operation", ["chat", "generate"])
def test_json_and_schema_formats(route: Route, operation: str) -> None:
    def ask(fmt: Any) -> str:
        if operation == "chat":
            return client(route).chat(model="oa-model", messages=[{"role": "user", "content": "a person"}],
                                      format=fmt).message.content or ""
        return client(route).generate(model="oa-model", prompt="a person", format=fmt).response

    assert set(json.loads(ask(SCHEMA))) == {"name", "age", "tags"}
    assert reached(route)["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "response", "schema": SCHEMA, "strict": True}}
    assert isinstance(json.loads(ask("json")), dict)
    assert reached(route)["response_format"] == {"type": "json_object"}


def test_options_translated_and_hints_dropped(route: Route) -> None:
    options = {"temperature": 0.3, "top_p": 0.9, "top_k": 20, "min_p": 0.05, "seed": 7, "stop": ["zz"],
               "num_predict": 5, "presence_penalty": 0.1, "frequency_penalty": 0.2, "num_ctx": 2048, "num_thread": 4}
    reply = client(route).generate(model="oa-model", prompt="once upon", options=options, keep_alive="10m")
    assert reply.done_reason == "length" and reply.eval_count == 5
    body = reached(route)
    for name in ("temperature", "top_p", "top_k", "min_p", "seed", "stop", "presence_penalty", "frequency_penalty"):
        assert body[name] == options[name], name
    assert body["max_tokens"] == 5
    assert not {"options", "num_ctx", "num_thread", "keep_alive"} & set(body)


@pytest.mark.parametrize(("options", "field"), [
    ({"mirostat": 2}, "options.mirostat"),
])
def test_options_that_cannot_cross_are_refused_by_name(route: Route, options: dict, field: str) -> None:
    before = route.openai_engine.stats()["inferences"]
    with pytest.raises(ollama.ResponseError, match=f"'{field}' cannot be sent to an OpenAI-API engine") as raised:
        client(route).chat(model="oa-model", messages=[{"role": "user", "content": "hi"}], options=options)
    assert raised.value.status_code == 400
    assert route.openai_engine.stats()["inferences"] == before


def test_unknown_field_is_refused_by_name(route: Route) -> None:
    response = httpx.post(f"{route.url}/api/chat", json={
        "model": "oa-model", "messages": [{"role": "user", "content": "hi"}], "stream": False, "template": "{{x}}"})
    assert response.status_code == 400
    assert "'template' cannot be sent to an OpenAI-API engine" in response.json()["error"]


@pytest.mark.parametrize(("keep_alive", "reason"), [("5m", "load"), (0, "unload")])
def test_load_and_unload_answered_like_ollama(route: Route, keep_alive: Any, reason: str) -> None:
    before = route.openai_engine.stats()["inferences"]
    reply = client(route).generate(model="oa-model", keep_alive=keep_alive)
    assert reply.done and reply.done_reason == reason and reply.response == "" and reply.model == "oa-model"
    chat = client(route).chat(model="oa-model", messages=[], keep_alive=keep_alive)
    assert chat.done and chat.done_reason == reason
    assert route.openai_engine.stats()["inferences"] == before  # nothing was generated


def test_think_and_thinking(route: Route) -> None:
    reply = client(route).chat(model="oa-model", messages=[{"role": "user", "content": "hi"}], think=True)
    assert reached(route)["reasoning_effort"] == "medium"
    assert reply.message.thinking == "the tiny model thinks it over"
    parts = list(client(route).chat(model="oa-model", messages=[{"role": "user", "content": "hi"}], think="high",
                                    stream=True))
    assert reached(route)["reasoning_effort"] == "high"
    assert "".join(p.message.thinking or "" for p in parts) == "the tiny model thinks it over"
    client(route).chat(model="oa-model", messages=[{"role": "user", "content": "hi"}], think=False)
    assert reached(route)["chat_template_kwargs"] == {"enable_thinking": False}


def test_logprobs(route: Route) -> None:
    reply = client(route).chat(model="oa-model", messages=[{"role": "user", "content": "hi"}], logprobs=True,
                               top_logprobs=2)
    assert reached(route)["logprobs"] is True and reached(route)["top_logprobs"] == 2
    assert reply.logprobs and len(reply.logprobs) == reply.eval_count
    assert len(reply.logprobs[0].top_logprobs or []) == 2


def test_embed_dimensions(route: Route) -> None:
    reply = client(route).embed(model="oa-model", input=["a", "b"], dimensions=4)
    assert reached(route)["dimensions"] == 4 and [len(v) for v in reply.embeddings] == [4, 4]


def test_answer_types_and_no_invented_timings(route: Route) -> None:
    raw = httpx.post(f"{route.url}/api/chat", timeout=30, json={
        "model": "oa-model", "messages": [{"role": "user", "content": "hi"}], "stream": False}).json()
    parsed = ollama.ChatResponse.model_validate(raw)
    assert parsed.model == "oa-model" and parsed.eval_count and parsed.total_duration
    assert "load_duration" not in raw and "eval_duration" not in raw  # not measured: not made up
    lines = httpx.post(f"{route.url}/api/generate", timeout=30, json={"model": "oa-model", "prompt": "x"}).text
    for line in lines.splitlines():
        assert ollama.GenerateResponse.model_validate(json.loads(line)).model == "oa-model"
