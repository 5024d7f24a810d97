"""The tiny model server as the real openai and ollama clients and plain httpx see it."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import ollama
import openai
import pytest

from app.tinymodel import RunningTiny, TinyModelOptions, start_tiny
from app.tinymodel.text import count_tokens, embed, reply_tokens

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def tiny() -> AsyncIterator[RunningTiny]:
    server = await start_tiny(TinyModelOptions(models=["tiny:latest", "other"]))
    try:
        yield server
    finally:
        await server.close()


def oai(tiny: RunningTiny, **kw: object) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{tiny.url}/v1", api_key="x", max_retries=0, **kw)  # type: ignore[arg-type]


async def wait_for(predicate: Callable[[], Awaitable[bool]], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not await predicate():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        await asyncio.sleep(0.01)


def test_text_is_deterministic() -> None:
    a = reply_tokens("hello", 5)
    assert a == reply_tokens("hello", 5) and len(a) == 5
    assert not a[0].startswith(" ") and all(t.startswith(" ") for t in a[1:])
    assert reply_tokens("hello", 3) == a[:3]
    assert count_tokens("") == 1 and count_tokens("a b  c") == 3
    v = embed("x", 8)
    assert len(v) == 8 and math.isclose(sum(x * x for x in v), 1.0) and v == embed("x", 8)


async def test_openai_models_chat_and_stream(tiny: RunningTiny) -> None:
    client = oai(tiny)
    models = await client.models.list()
    assert [m.id for m in models.data] == ["tiny:latest", "other"]
    expected = "".join(reply_tokens("hi", 12))
    done = await client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}])
    assert done.choices[0].message.content == expected
    assert done.choices[0].finish_reason == "stop"
    assert done.usage is not None and done.usage.completion_tokens == 12 and done.usage.prompt_tokens == 1

    stream = await client.chat.completions.create(
        model="tiny:latest", messages=[{"role": "user", "content": "hi"}], stream=True,
        max_tokens=4, stream_options={"include_usage": True},
    )
    chunks = [c async for c in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "".join(reply_tokens("hi", 4))
    assert chunks[-2].choices[0].finish_reason == "length"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 4
    await client.close()


async def test_openai_completions_and_embeddings(tiny: RunningTiny) -> None:
    client = oai(tiny)
    done = await client.completions.create(model="other", prompt="abc", max_tokens=3)
    assert done.choices[0].text == "".join(reply_tokens("abc", 3))
    assert done.choices[0].finish_reason == "length"
    stream = await client.completions.create(model="other", prompt="abc", stream=True,
                                             stream_options={"include_usage": True})
    chunks = [c async for c in stream]
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "".join(reply_tokens("abc", 12))
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 13

    emb = await client.embeddings.create(model="tiny", input=["a", "b"])  # client asks for base64
    assert [d.index for d in emb.data] == [0, 1]
    assert emb.data[0].embedding == pytest.approx(embed("a", 8), rel=1e-6)
    flat = await client.embeddings.create(model="tiny", input="a", encoding_format="float")
    assert flat.data[0].embedding == pytest.approx(embed("a", 8))
    with pytest.raises(openai.NotFoundError) as info:
        await client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    assert info.value.code == "model_not_found"
    await client.close()


async def test_ollama_client(tiny: RunningTiny) -> None:
    client = ollama.AsyncClient(host=tiny.url)
    listed = await client.list()
    assert [m.model for m in listed.models] == ["tiny:latest", "other"]
    reply = await client.chat(model="tiny", messages=[{"role": "user", "content": "hi"}], stream=False)
    assert reply.message.content == "".join(reply_tokens("hi", 12)) and reply.done
    assert reply.eval_count == 12 and reply.done_reason == "stop"

    parts = [p async for p in await client.chat(model="tiny", messages=[{"role": "user", "content": "hi"}],
                                                  stream=True, options={"num_predict": 5})]
    assert "".join(p.message.content or "" for p in parts) == "".join(reply_tokens("hi", 5))
    assert parts[-1].done and parts[-1].done_reason == "length" and parts[-1].prompt_eval_count == 1

    gen = [p async for p in await client.generate(model="other", prompt="q", stream=True)]
    assert "".join(p.response or "" for p in gen) == "".join(reply_tokens("q", 12))
    assert (await client.generate(model="other", prompt="q")).total_duration is not None

    emb = await client.embed(model="tiny", input=["a", "b"])
    assert len(emb.embeddings) == 2 and list(emb.embeddings[0]) == pytest.approx(embed("a", 8))
    legacy = await client.embeddings(model="tiny", prompt="a")
    assert list(legacy.embedding) == pytest.approx(embed("a", 8))
    assert (await client.show("tiny")).details is not None
    assert [m.model for m in (await client.ps()).models] == ["tiny:latest", "other"]

    with pytest.raises(ollama.ResponseError) as info:
        await client.chat(model="nope", messages=[{"role": "user", "content": "x"}], stream=False)
    assert info.value.status_code == 404 and 'model "nope" not found' in info.value.error
    await client.close()


async def test_errors_auth_and_api_selection(tiny: RunningTiny) -> None:
    async with httpx.AsyncClient(base_url=tiny.url) as http:
        bad = await http.post("/v1/chat/completions", content=b"{nope")
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
        bad = await http.post("/api/chat", content=b"{nope")
        assert bad.status_code == 400 and isinstance(bad.json()["error"], str)
        assert (await http.get("/api/version")).json()["version"]

        await http.post("/_tiny/config", json={"require_token": "sekret", "api": "openai"})
        assert (await http.get("/v1/models")).status_code == 401
        ok = await http.get("/v1/models", headers={"Authorization": "Bearer sekret"})
        assert ok.status_code == 200
        assert (await http.get("/api/tags", headers={"Authorization": "Bearer sekret"})).status_code == 404
        assert (await http.post("/_tiny/config", json={"bogus": 1})).status_code == 400

        await http.post("/v1/chat/completions", headers={"Authorization": "Bearer sekret", "X-Custom": "v"},
                        json={"model": "tiny", "messages": [{"role": "user", "content": "x"}]})
        stats = (await http.get("/_tiny/stats")).json()
        assert stats["last_headers"]["x-custom"] == "v" and stats["last_body"]["model"] == "tiny"
        assert stats["requests"] == 6 and stats["in_flight"] == 0


async def test_fault_refuse_and_500(tiny: RunningTiny) -> None:
    async with httpx.AsyncClient(base_url=tiny.url) as http:
        await http.post("/_tiny/config", json={"fail_mode": "refuse"})
        with pytest.raises(httpx.RemoteProtocolError):
            await http.get("/v1/models")
        await http.post("/_tiny/config", json={"fail_mode": "500"})
        r = await http.post("/api/chat", json={"model": "tiny", "messages": []})
        assert r.status_code == 500 and "error" in r.json()
        await http.post("/_tiny/config", json={"fail_mode": None})
        assert (await http.get("/health")).status_code == 200


async def test_fault_hang_and_delay(tiny: RunningTiny) -> None:
    async with httpx.AsyncClient(base_url=tiny.url) as http:
        await http.post("/_tiny/config", json={"fail_mode": "hang"})
        with pytest.raises(httpx.ReadTimeout):
            await http.get("/v1/models", timeout=0.3)

        async def settled() -> bool:
            return (await http.get("/_tiny/stats")).json()["in_flight"] == 0

        await wait_for(settled)  # the handler ended when the client gave up
        await http.post("/_tiny/config", json={"fail_mode": None, "first_byte_delay_s": 0.2})
        started = time.monotonic()
        assert (await http.get("/v1/models")).status_code == 200
        assert time.monotonic() - started >= 0.2


async def test_fault_cut_stream(tiny: RunningTiny) -> None:
    async with httpx.AsyncClient(base_url=tiny.url) as http:
        await http.post("/_tiny/config", json={"fail_mode": "cut", "cut_after_chunks": 3})
        lines: list[str] = []
        with pytest.raises(httpx.RemoteProtocolError):
            async with http.stream("POST", "/v1/chat/completions", json={
                "model": "tiny", "stream": True, "messages": [{"role": "user", "content": "x"}],
            }) as resp:
                assert resp.status_code == 200
                async for line in resp.aiter_lines():
                    if line:
                        lines.append(line)
        assert len(lines) == 3 and "data: [DONE]" not in lines
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post("/api/chat", json={"model": "tiny", "stream": False, "messages": []})


def test_main_prints_url_and_stops_on_sigterm() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "app.tinymodel", "--port", "0", "--api", "ollama", "--model", "m1:latest"],
        cwd=REPO, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    ) as proc:
        _check_subprocess(proc)


def _check_subprocess(proc: subprocess.Popen[str]) -> None:
    try:
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        tags = httpx.get(f"{url}/api/tags").json()
        assert [m["name"] for m in tags["models"]] == ["m1:latest"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
