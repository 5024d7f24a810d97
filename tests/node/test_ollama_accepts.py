"""What Ollama accepts, Pairwise accepts: the requests real clients send that were refused, sent by
those clients (litellm's ollama/ provider, llama-index's Ollama, instructor's TOOLS mode,
langchain-openai's structured output) or, where noted, as the exact raw request a client sends."""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import ollama
import openai
import pydantic
import pytest

from tests.node.conftest import Route
from tests.node.test_ollama_client_to_openai_engine import WEATHER

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm would fetch its price list online

TIME = {"type": "function", "function": {"name": "get_time", "description": "The time in a city",
                                         "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                        "required": ["city"]}}}
USER: list[Any] = [{"role": "user", "content": "weather in Paris?"}]


def oa_reached(route: Route) -> dict[str, Any]:
    return dict(route.openai_engine.stats()["last_body"])


def ol_reached(route: Route) -> dict[str, Any]:
    return dict(route.ollama_engine.stats()["last_body"])


def test_litellm_ollama_provider_generate_to_an_openai_engine(route: Route) -> None:
    import litellm

    # litellm's ollama/ provider sends "images": [] on every generate: an empty list is no images.
    before = route.openai_engine.stats()["inferences"]
    reply = litellm.completion(model="ollama/oa-model", api_base=route.url, max_tokens=4,
                               messages=[{"role": "user", "content": "once upon"}])
    assert reply.choices[0].message.content is not None
    # The engine answered with the budget litellm sent (the tiny model says 12 words unless told).
    assert reply.usage.completion_tokens == 4
    assert route.openai_engine.stats()["inferences"] > before
    chunks = list(litellm.completion(model="ollama/oa-model", api_base=route.url, max_tokens=3, stream=True,
                                     messages=[{"role": "user", "content": "once upon"}]))
    assert "".join(c.choices[0].delta.content or "" for c in chunks)


def test_llama_index_ollama_chat_to_an_openai_engine(route: Route) -> None:
    from llama_index.core.llms import ChatMessage
    from llama_index.llms.ollama import Ollama

    llm = Ollama(model="oa-model", base_url=route.url, request_timeout=60)
    reply = llm.chat([ChatMessage(role="user", content="hello")])
    assert isinstance(reply.message.content, str)
    assert oa_reached(route)["messages"] == [{"role": "user", "content": "hello"}]


def test_top_level_fields_ollama_ignores_are_ignored_and_repeat_penalty_passed(route: Route) -> None:
    # The raw request ollama-ai-provider-v2 sends (a JavaScript client: the exact body, not the package).
    response = httpx.post(f"{route.url}/api/chat", timeout=60, json={
        "model": "oa-model", "messages": [{"role": "user", "content": "hi"}], "stream": False,
        "max_output_tokens": 50, "temperature": 0.4, "top_p": 0.8, "images": [], "format": "", "tools": [],
        "options": {"repeat_penalty": 1.1, "num_predict": 3, "stop": []}})
    assert response.status_code == 200, response.text
    body = oa_reached(route)
    assert body["repeat_penalty"] == 1.1 and body["max_tokens"] == 3
    # Ollama ignores top-level sampling fields; so does Pairwise (options are where they go).
    assert not {"max_output_tokens", "temperature", "top_p", "tools", "stop", "response_format"} & set(body)


def test_translated_embed_answer_carries_ollama_durations(route: Route) -> None:
    answer = httpx.post(f"{route.url}/api/embed", json={"model": "oa-model", "input": ["a", "b"]}, timeout=60).json()
    assert len(answer["embeddings"]) == 2
    assert answer["total_duration"] > 0 and answer["load_duration"] >= 0 and answer["prompt_eval_count"] > 0
    reply = ollama.Client(host=route.url).embed(model="oa-model", input="a")
    assert reply.total_duration and reply.load_duration is not None


@pytest.mark.parametrize("path,api", [("/api/chat", "ollama"), ("/v1/chat/completions", "openai")])
def test_non_finite_numbers_are_refused_by_name(route: Route, path: str, api: str) -> None:
    raw = ('{"model": "ol-model", "stream": false, "messages": [{"role": "user", "content": "hi"}], '
           '"options": {"temperature": NaN}, "temperature": Infinity}')
    before = route.ollama_engine.stats()["inferences"]
    response = httpx.post(f"{route.url}{path}", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    error = response.json()["error"]
    text = error if api == "ollama" else error["message"]
    assert "finite number" in text
    assert route.ollama_engine.stats()["inferences"] == before


@pytest.mark.parametrize("stream", [False, True])
def test_named_tool_choice_to_an_ollama_engine_is_the_constrained_call(route: Route, stream: bool) -> None:
    client = openai.OpenAI(base_url=f"{route.url}/v1", api_key="x", max_retries=0)
    choice: Any = {"type": "function", "function": {"name": "get_time"}}
    if stream:
        chunks = list(client.chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER, TIME],
                                                     tool_choice=choice, stream=True))
        deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
        assert [d.function.name for d in deltas if d.function and d.function.name] == ["get_time"]
        arguments = "".join(d.function.arguments or "" for d in deltas if d.function)
        finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        assert finish == ["tool_calls"]
        assert not "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        reply = client.chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER, TIME],
                                               tool_choice=choice)
        [call] = reply.choices[0].message.tool_calls or []
        assert call.function.name == "get_time" and reply.choices[0].finish_reason == "tool_calls"
        arguments = call.function.arguments
    assert json.loads(arguments).keys() == {"city"}
    body = ol_reached(route)
    assert body["format"] == TIME["function"]["parameters"] and "tools" not in body


def test_required_tool_choice_among_several_names_the_call(route: Route) -> None:
    client = openai.OpenAI(base_url=f"{route.url}/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER, TIME],
                                           tool_choice="required")
    [call] = reply.choices[0].message.tool_calls or []
    assert call.function.name == "get_weather" and json.loads(call.function.arguments).keys() == {"city", "days"}
    assert ol_reached(route)["format"]["properties"]["name"]["enum"] == ["get_weather", "get_time"]


def test_parallel_tool_calls_false_keeps_the_first_call(route: Route) -> None:
    client = openai.OpenAI(base_url=f"{route.url}/v1", api_key="x", max_retries=0)
    route.ollama_engine.config(tool_calls=2)
    try:
        both = client.chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER, TIME])
        one = client.chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER, TIME],
                                             parallel_tool_calls=False)
        chunks = list(client.chat.completions.create(model="ol-model", messages=USER, tools=[WEATHER, TIME],
                                                     parallel_tool_calls=False, stream=True))
    finally:
        route.ollama_engine.config(tool_calls=1)
    assert len(both.choices[0].message.tool_calls or []) == 2
    assert [c.function.name for c in one.choices[0].message.tool_calls or []] == ["get_weather"]
    streamed = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    assert [d.function.name for d in streamed if d.function and d.function.name] == ["get_weather"]
    assert "parallel_tool_calls" not in ol_reached(route)


class Person(pydantic.BaseModel):
    name: str
    age: int


def test_instructor_tools_mode_to_an_ollama_engine(route: Route) -> None:
    import instructor

    client = instructor.from_openai(openai.OpenAI(base_url=f"{route.url}/v1", api_key="x", max_retries=0),
                                    mode=instructor.Mode.TOOLS)
    person = client.chat.completions.create(model="ol-model", response_model=Person, max_retries=0,
                                            messages=[{"role": "user", "content": "Ada, 36"}])
    assert isinstance(person, Person)
    assert ol_reached(route)["format"]["properties"].keys() == {"name", "age"}


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_langchain_openai_structured_output_to_an_ollama_engine(route: Route, method: str) -> None:
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="ol-model", base_url=f"{route.url}/v1", api_key="x", max_retries=0)  # type: ignore[arg-type]
    person = llm.with_structured_output(Person, method=method).invoke("Ada, 36")  # type: ignore[arg-type]
    assert isinstance(person, Person)
    assert ol_reached(route)["format"]["properties"].keys() == {"name", "age"}
