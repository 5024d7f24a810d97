"""Anthropic Messages at /v1/messages with the real anthropic SDK, over an OpenAI-API and an
Ollama-API engine, at a node's front door and through a peer relay: what reached the engine, and
what came back, typed by the SDK (the message, the exact SSE event sequence, errors)."""

from __future__ import annotations

import base64
import json
from typing import Any

import anthropic
import httpx
import pytest

from tests.node.conftest import Route
from tests.node.test_ollama_client_to_openai_engine import PNG

MODELS = ["oa-model", "ol-model"]
WEATHER: Any = {"name": "get_weather", "description": "The weather in a city",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def client(route: Route, key: str = "unused") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=route.url, api_key=key, max_retries=0)


def reached(route: Route, model: str) -> dict[str, Any]:
    engine = route.openai_engine if model == "oa-model" else route.ollama_engine
    return dict(engine.stats()["last_body"])


@pytest.mark.parametrize("model", MODELS)
def test_text_whole_with_sampling(route: Route, model: str) -> None:
    # This anthropic SDK no longer offers the sampling fields; older ones and other clients send them.
    reply = client(route).messages.create(model=model, max_tokens=5, system="be brief", stop_sequences=["zz"],
                                          extra_body={"temperature": 0.2, "top_p": 0.9, "top_k": 20},
                                          messages=[{"role": "user", "content": "once upon a time"}])
    assert reply.type == "message" and reply.role == "assistant" and reply.model == model
    assert reply.stop_reason == "max_tokens" and reply.content[0].type == "text" and reply.content[0].text
    assert reply.usage.output_tokens == 5 and reply.usage.input_tokens > 0
    body = reached(route, model)
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    if model == "oa-model":
        assert (body["max_tokens"], body["temperature"], body["top_p"], body["top_k"], body["stop"]) == \
            (5, 0.2, 0.9, 20, ["zz"])
    else:
        assert body["options"] == {"num_predict": 5, "temperature": 0.2, "top_p": 0.9, "top_k": 20, "stop": ["zz"]}


@pytest.mark.parametrize("model", MODELS)
def test_stream_has_the_exact_event_sequence(route: Route, model: str) -> None:
    events = list(client(route).messages.create(model=model, max_tokens=50, stream=True,
                                                messages=[{"role": "user", "content": "hello"}]))
    kinds = [e.type for e in events]
    deltas = kinds.count("content_block_delta")
    assert kinds == ["message_start", "content_block_start", *["content_block_delta"] * deltas,
                     "content_block_stop", "message_delta", "message_stop"] and deltas == 12
    with client(route).messages.stream(model=model, max_tokens=50,
                                       messages=[{"role": "user", "content": "hello"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.content[0].text == text and final.stop_reason == "end_turn"  # type: ignore[union-attr]
    assert final.usage.output_tokens == 12 and final.usage.input_tokens > 0


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("stream", [False, True])
def test_tool_use_round_trip(route: Route, model: str, stream: bool) -> None:
    c = client(route)
    ask: list[Any] = [{"role": "user", "content": "weather in Paris?"}]
    if stream:
        with c.messages.stream(model=model, max_tokens=50, tools=[WEATHER], messages=ask) as s:
            first = s.get_final_message()
    else:
        first = c.messages.create(model=model, max_tokens=50, tools=[WEATHER], messages=ask)
    [use] = [block for block in first.content if block.type == "tool_use"]
    assert first.stop_reason == "tool_use" and use.name == "get_weather" and use.input == {"city": "tiny"}
    tools = reached(route, model)["tools"]
    assert tools == [{"type": "function", "function": {"name": "get_weather", "description": WEATHER["description"],
                                                       "parameters": WEATHER["input_schema"]}}]
    second = c.messages.create(model=model, max_tokens=50, tools=[WEATHER], messages=[
        *ask, {"role": "assistant", "content": [block.model_dump() for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]}])
    assert second.stop_reason == "end_turn" and second.content[0].type == "text"
    sent = reached(route, model)["messages"]
    if model == "oa-model":
        assert sent[1]["tool_calls"][0]["id"] == use.id
        assert sent[2] == {"role": "tool", "tool_call_id": use.id, "content": "sunny"}
    else:
        assert sent[1]["tool_calls"] == [{"function": {"name": "get_weather", "arguments": {"city": "tiny"}}}]
        assert sent[2] == {"role": "tool", "content": "sunny", "tool_name": "get_weather"}


@pytest.mark.parametrize("model", MODELS)
def test_forced_tool_choice(route: Route, model: str) -> None:
    reply = client(route).messages.create(model=model, max_tokens=50, tools=[WEATHER],
                                          tool_choice={"type": "tool", "name": "get_weather"},
                                          messages=[{"role": "user", "content": "hi"}, {"role": "assistant",
                                                    "content": "hello"}, {"role": "user", "content": "go"}])
    [use] = [block for block in reply.content if block.type == "tool_use"]
    assert use.name == "get_weather" and set(use.input) == {"city"}  # type: ignore[arg-type]


@pytest.mark.parametrize("model", MODELS)
def test_image_and_thinking(route: Route, model: str) -> None:
    b64 = base64.b64encode(PNG).decode()
    reply = client(route).messages.create(
        model=model, max_tokens=2000, thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}},
            {"type": "text", "text": "what is this?"}]}])
    assert [block.type for block in reply.content] == ["thinking", "text"]
    assert reply.content[0].thinking == "the tiny model thinks it over"  # type: ignore[union-attr]
    body = reached(route, model)
    if model == "oa-model":
        assert body["reasoning_effort"] == "low"
        assert body["messages"][0]["content"][0] == {"type": "image_url",
                                                     "image_url": {"url": f"data:image/png;base64,{b64}"}}
    else:
        assert body["think"] == "low" and body["messages"] == [{"role": "user", "content": "what is this?",
                                                                "images": [b64]}]
    with client(route).messages.stream(model=model, max_tokens=2000, thinking={"type": "enabled",
                                                                               "budget_tokens": 1024},
                                       messages=[{"role": "user", "content": "hi"}]) as stream:
        final = stream.get_final_message()
    assert [block.type for block in final.content] == ["thinking", "text"]


@pytest.mark.parametrize("model", MODELS)
def test_structured_output(route: Route, model: str) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
              "additionalProperties": False}
    reply = client(route).messages.create(model=model, max_tokens=50, messages=[{"role": "user", "content": "x"}],
                                          output_config={"format": {"type": "json_schema", "schema": schema}})
    assert set(json.loads(reply.content[0].text)) == {"name"}  # type: ignore[union-attr]
    body = reached(route, model)
    assert (body["response_format"]["json_schema"]["schema"] if model == "oa-model" else body["format"]) == schema


def test_count_tokens_is_the_engine_count(route: Route) -> None:
    count = client(route).messages.count_tokens(model="ol-model", messages=[{"role": "user", "content": "a b c"}])
    reply = client(route).messages.create(model="ol-model", max_tokens=5, messages=[{"role": "user",
                                                                                     "content": "a b c"}])
    assert count.input_tokens == reply.usage.input_tokens > 0


def test_errors_in_anthropic_shape(route: Route) -> None:
    c = client(route)
    with pytest.raises(anthropic.NotFoundError, match="model 'nope' not found on any node") as missing:
        c.messages.create(model="nope", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert missing.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    with pytest.raises(anthropic.BadRequestError, match="server tool 'web_search_20250305' cannot be run here"):
        c.messages.create(model="oa-model", max_tokens=5, messages=[{"role": "user", "content": "hi"}],
                          tools=[{"type": "web_search_20250305", "name": "web_search"}])
    raw = httpx.post(f"{route.url}/v1/messages", json={"model": "oa-model", "messages": []},
                     headers={"anthropic-version": "2023-06-01"})
    assert raw.status_code == 400
    assert raw.json() == {"type": "error", "error": {"type": "invalid_request_error",
                                                     "message": "invalid request: the request has no 'max_tokens'"}}


def test_a_pw_key_in_x_api_key_is_checked_as_a_key(route: Route) -> None:
    with pytest.raises(anthropic.AuthenticationError):
        client(route, key="pw-not-a-real-key").messages.create(model="oa-model", max_tokens=5,
                                                               messages=[{"role": "user", "content": "hi"}])


def test_a_valid_pw_key_in_x_api_key_names_the_caller(node_factory: Any, tiny_factory: Any) -> None:
    from app.harness import NodeProc

    engine = tiny_factory("--api", "openai", "--model", "oa-model")
    node: NodeProc = node_factory("keyed").start()
    node.cli("engines", "add", "oa", "--url", engine.url, "--api", "openai")
    key = node.cli("keys", "create", "laptop", "--models", "oa-*").stdout.strip()
    c = anthropic.Anthropic(base_url=node.url, api_key=key, max_retries=0)
    raw = c.messages.with_raw_response.create(model="oa-model", max_tokens=5,
                                              messages=[{"role": "user", "content": "hi"}])
    job = next(j for j in node.cli_json("jobs") if j["id"] == raw.headers["x-pairwise-job"])
    assert job["requester"]["key"] == "laptop" and job["requester"]["authenticated"] is True
    with pytest.raises(anthropic.PermissionDeniedError, match="may use only models matching oa-") as refused:
        c.messages.create(model="other", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert refused.value.body["error"]["type"] == "permission_error"  # type: ignore[index]
