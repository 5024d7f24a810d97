"""The real openai and ollama clients, and curl, through the front door, both ways of translation."""

from __future__ import annotations

import json
import subprocess

import httpx
import ollama
import openai
import pytest

from tests.node.conftest import TwoEngines

pytestmark = pytest.mark.usefixtures("data_path")  # each test on the splice and on aiohttp


def oa_client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)


@pytest.mark.parametrize("model", ["oa-model", "ol-model"])
def test_openai_client_chat_stream_and_complete(two_engines: TwoEngines, model: str) -> None:
    client = oa_client(two_engines.node.url)
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}])
    assert reply.choices[0].message.content
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.completion_tokens > 0

    pieces, usage = [], None
    stream = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}],
                                            stream=True, stream_options={"include_usage": True})
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.usage:
            usage = chunk.usage
    assert "".join(pieces) == reply.choices[0].message.content  # deterministic model: same words both ways
    assert usage is not None and usage.completion_tokens == reply.usage.completion_tokens

    completion = client.completions.create(model=model, prompt="once upon", max_tokens=5)
    assert completion.choices[0].text and completion.choices[0].finish_reason == "length"

    emb = client.embeddings.create(model=model, input=["a", "b"])
    assert len(emb.data) == 2 and len(emb.data[0].embedding) == 8


def test_openai_client_lists_models_once(two_engines: TwoEngines) -> None:
    client = oa_client(two_engines.node.url)
    ids = [m.id for m in client.models.list()]
    assert sorted(ids) == ["oa-model", "ol-model:latest"]
    assert client.models.retrieve("oa-model").id == "oa-model"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("missing-model")


@pytest.mark.parametrize("model", ["oa-model", "ol-model"])
def test_ollama_client_chat_generate_embed(two_engines: TwoEngines, model: str) -> None:
    client = ollama.Client(host=two_engines.node.url)
    reply = client.chat(model=model, messages=[{"role": "user", "content": "hello"}])
    assert reply.message.content and reply.done and reply.done_reason == "stop"
    assert reply.eval_count and reply.eval_count > 0

    parts = list(client.chat(model=model, messages=[{"role": "user", "content": "hello"}], stream=True))
    assert parts[-1].done and parts[-1].eval_count == reply.eval_count
    assert "".join(p.message.content or "" for p in parts) == reply.message.content

    gen = client.generate(model=model, prompt="once upon", options={"num_predict": 4})
    assert gen.response and gen.done_reason == "length"
    streamed = list(client.generate(model=model, prompt="once upon", stream=True))
    assert streamed[-1].done

    emb = client.embed(model=model, input="some text")
    assert len(emb.embeddings) == 1 and len(emb.embeddings[0]) == 8
    legacy = client.embeddings(model=model, prompt="some text")
    assert len(legacy.embedding) == 8


def test_ollama_client_lists_show_version_ps(two_engines: TwoEngines) -> None:
    client = ollama.Client(host=two_engines.node.url)
    names = sorted(m.model or "" for m in client.list().models)
    assert names == ["oa-model", "ol-model:latest"]
    assert client.show("ol-model").details is not None
    assert httpx.get(f"{two_engines.node.url}/api/version").json()["version"]
    assert len(client.ps().models) == 2


def test_curl_chat_and_stream_with_node_header(two_engines: TwoEngines) -> None:
    url = two_engines.node.url
    body = json.dumps({"model": "oa-model", "messages": [{"role": "user", "content": "hi"}], "stream": False})
    out = subprocess.run(["curl", "-s", "-i", f"{url}/api/chat", "-d", body], capture_output=True, text=True,
                         check=True).stdout
    head, _, payload = out.partition("\n\n")
    assert "X-Pairwise-Node: alpha" in head
    assert json.loads(payload)["done"] is True
    body = json.dumps({"model": "ol-model", "messages": [{"role": "user", "content": "hi"}], "stream": True})
    out = subprocess.run(["curl", "-s", "-N", f"{url}/v1/chat/completions", "-d", body], capture_output=True,
                         text=True, check=True).stdout
    events = [line for line in out.splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]" and len(events) > 3
