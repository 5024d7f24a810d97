"""OpenAI Responses at /v1/responses with the real openai SDK, over an OpenAI-API and an
Ollama-API engine, at a node's front door and through a peer relay: what reached the engine,
and what came back, typed by the SDK (objects and the streamed event sequence)."""

from __future__ import annotations

import base64
import json
from typing import Any

import openai
import pytest
from openai.types.responses import Response

from tests.node.conftest import Route
from tests.node.test_ollama_client_to_openai_engine import PNG, SCHEMA

MODELS = ["oa-model", "ol-model"]
WEATHER: Any = {"type": "function", "name": "get_weather", "description": "The weather in a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def client(route: Route) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{route.url}/v1", api_key="unused", max_retries=0)


def reached(route: Route, model: str) -> dict[str, Any]:
    engine = route.openai_engine if model == "oa-model" else route.ollama_engine
    return dict(engine.stats()["last_body"])


def sent_messages(route: Route, model: str) -> list[dict[str, Any]]:
    return list(reached(route, model)["messages"])


@pytest.mark.parametrize("model", MODELS)
def test_text_whole(route: Route, model: str) -> None:
    reply = client(route).responses.create(model=model, input="once upon a time", instructions="be brief",
                                           max_output_tokens=5, temperature=0.3, top_p=0.9)
    assert isinstance(reply, Response) and reply.object == "response" and reply.model == model
    assert reply.status == "incomplete" and reply.incomplete_details and \
        reply.incomplete_details.reason == "max_output_tokens"  # the tiny model says 12 words unless told
    assert reply.output_text and reply.usage and reply.usage.output_tokens == 5 and reply.usage.input_tokens > 0
    body = reached(route, model)
    first = sent_messages(route, model)[0]
    assert first == {"role": "system", "content": "be brief"}
    if model == "oa-model":
        assert body["max_tokens"] == 5 and body["temperature"] == 0.3 and body["top_p"] == 0.9
    else:
        assert body["options"] == {"num_predict": 5, "temperature": 0.3, "top_p": 0.9}


@pytest.mark.parametrize("model", MODELS)
def test_text_streamed_event_sequence(route: Route, model: str) -> None:
    events = list(client(route).responses.create(model=model, input="hello there", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[2:4] == ["response.output_item.added", "response.content_part.added"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    final = events[-1].response  # type: ignore[union-attr]
    assert deltas and final.output_text == "".join(deltas) and final.status == "completed"
    assert final.usage and final.usage.output_tokens == 12 and final.usage.input_tokens > 0


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_round_trip(route: Route, model: str, stream: bool) -> None:
    c = client(route)
    if stream:
        events = list(c.responses.create(model=model, input="weather in Paris?", tools=[WEATHER], stream=True))
        kinds = [e.type for e in events]
        assert "response.function_call_arguments.delta" in kinds and "response.function_call_arguments.done" in kinds
        first = events[-1].response  # type: ignore[union-attr]
    else:
        first = c.responses.create(model=model, input="weather in Paris?", tools=[WEATHER])
    [call] = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "tiny"} and call.call_id
    tools = reached(route, model)["tools"]
    assert tools == [{"type": "function", "function": {k: WEATHER[k] for k in ("name", "description", "parameters")}}]
    second = c.responses.create(model=model, tools=[WEATHER], input=[
        {"role": "user", "content": "weather in Paris?"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
    assert second.output_text and second.status == "completed"
    sent = sent_messages(route, model)
    if model == "oa-model":
        assert sent[1]["tool_calls"][0]["id"] == call.call_id and sent[1]["content"] == ""
        assert sent[2] == {"role": "tool", "tool_call_id": call.call_id, "content": "sunny"}
    else:
        assert sent[1]["tool_calls"] == [{"function": {"name": "get_weather", "arguments": {"city": "tiny"}}}]
        assert sent[2] == {"role": "tool", "content": "sunny", "tool_name": "get_weather"}


@pytest.mark.parametrize("model", MODELS)
def test_previous_response_id_carries_the_conversation(route: Route, model: str) -> None:
    c = client(route)
    first = c.responses.create(model=model, input="my name is Ada", instructions="first instructions")
    second = c.responses.create(model=model, input="what is my name?", previous_response_id=first.id)
    assert second.previous_response_id == first.id
    assert sent_messages(route, model) == [{"role": "user", "content": "my name is Ada"},
                                           {"role": "assistant", "content": first.output_text},
                                           {"role": "user", "content": "what is my name?"}]
    streamed = list(c.responses.create(model=model, input="and again?", previous_response_id=second.id,
                                       stream=True))
    assert streamed[-1].type == "response.completed"
    assert len(sent_messages(route, model)) == 5
    third = streamed[-1].response  # type: ignore[union-attr]
    c.responses.create(model=model, input="once more", previous_response_id=third.id)
    assert len(sent_messages(route, model)) == 7


def test_previous_response_id_unknown_or_not_stored_is_named(route: Route) -> None:
    c = client(route)
    with pytest.raises(openai.BadRequestError, match="resp_nothing.*unknown here") as raised:
        c.responses.create(model="oa-model", input="hi", previous_response_id="resp_nothing")
    assert raised.value.param == "previous_response_id"
    unstored = c.responses.create(model="oa-model", input="hi", store=False)
    assert unstored.store is False
    with pytest.raises(openai.BadRequestError, match="store false"):
        c.responses.create(model="oa-model", input="again", previous_response_id=unstored.id)


@pytest.mark.parametrize("tool", [{"type": "web_search"}, {"type": "file_search", "vector_store_ids": ["v"]},
                                  {"type": "code_interpreter", "container": {"type": "auto"}}])
def test_built_in_tools_are_refused_by_name(route: Route, tool: Any) -> None:
    before = route.openai_engine.stats()["inferences"]
    with pytest.raises(openai.BadRequestError, match=f"built-in tool '{tool['type']}' cannot be run here") as raised:
        client(route).responses.create(model="oa-model", input="hi", tools=[tool])
    assert raised.value.param == "tools[0].type"
    assert route.openai_engine.stats()["inferences"] == before


@pytest.mark.parametrize("model", MODELS)
def test_json_schema_format_image_and_reasoning(route: Route, model: str) -> None:
    b64 = base64.b64encode(PNG).decode()
    reply = client(route).responses.create(
        model=model, reasoning={"effort": "low"},
        text={"format": {"type": "json_schema", "name": "person", "schema": SCHEMA, "strict": True}},
        input=[{"role": "user", "content": [{"type": "input_text", "text": "who is this?"},
                                            {"type": "input_image", "image_url": f"data:image/png;base64,{b64}",
                                             "detail": "auto"}]}])
    person = json.loads(reply.output_text)
    assert set(person) == {"name", "age", "tags"}
    body = reached(route, model)
    if model == "oa-model":
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA and body["reasoning_effort"] == "low"
        assert body["messages"][0]["content"][1] == {"type": "image_url",
                                                     "image_url": {"url": f"data:image/png;base64,{b64}"}}
    else:
        assert body["format"] == SCHEMA and body["think"] == "low"
        assert body["messages"] == [{"role": "user", "content": "who is this?", "images": [b64]}]
        assert [item.type for item in reply.output][:1] == ["reasoning"]


def test_unknown_model_is_named_in_the_openai_shape(route: Route) -> None:
    with pytest.raises(openai.NotFoundError, match="model 'nope' not found on any node"):
        client(route).responses.create(model="nope", input="hi")
