"""Honest listings: distinct stable digests, stable `created`, /api/show passed through from an Ollama
engine and built from what is known for an OpenAI engine (embedding models say so), a current
/api/version, and the model named in answers as the caller named it; checked against the clients' types."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import ollama
import openai
import pytest

from app.harness import NodeProc, TinyProc


@dataclass
class Listed:
    node: NodeProc


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Listed]:
    root: Path = tmp_path_factory.mktemp("listings")
    procs: list[TinyProc | NodeProc] = []
    try:
        procs.append(oa := TinyProc("--api", "openai", "--model", "oa-model", "--model", "oa-embed"))
        procs.append(ol := TinyProc("--api", "ollama", "--model", "ol-model:latest", "--model", "ol-embed:latest"))
        procs.append(node := NodeProc(root / "home", "alpha").start())
        node.cli("engines", "add", "oa", "--url", oa.url + "/v1", "--api", "openai")
        node.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama")
        yield Listed(node)
    finally:
        for proc in reversed(procs):
            proc.stop()


def test_tags_have_distinct_stable_digests(listed: Listed) -> None:
    client = ollama.Client(host=listed.node.url)
    first, again = client.list(), client.list()
    digests = {m.model: m.digest for m in first.models}
    assert set(digests) == {"oa-model", "oa-embed", "ol-model:latest", "ol-embed:latest"}
    assert len(set(digests.values())) == 4 and all(digests.values())
    assert digests == {m.model: m.digest for m in again.models}
    raw = httpx.get(f"{listed.node.url}/api/tags").json()
    assert ollama.ListResponse.model_validate(raw) and raw == httpx.get(f"{listed.node.url}/api/tags").json()


def test_v1_models_created_is_stable(listed: Listed) -> None:
    client = openai.OpenAI(base_url=f"{listed.node.url}/v1", api_key="unused", max_retries=0)
    first = {m.id: m.created for m in client.models.list()}
    assert first == {m.id: m.created for m in client.models.list()}
    assert first["oa-model"] == 1_700_000_000  # the engine's own value
    assert client.models.retrieve("ol-model").id == "ol-model"  # as asked, not rewritten


def test_show_capabilities_and_model_info(listed: Listed) -> None:
    client = ollama.Client(host=listed.node.url)
    passed = client.show("ol-model")  # the Ollama engine's own answer
    assert passed.capabilities == ["completion", "tools", "thinking"]
    assert passed.modelinfo and passed.modelinfo["tiny.context_length"] == 4096
    assert client.show("ol-embed").capabilities == ["embedding"]
    assert client.show("oa-embed").capabilities == ["embedding"]
    built = client.show("oa-model")  # an OpenAI engine: what it says of its model, and a probe
    assert built.capabilities == ["completion", "embedding"]  # the tiny model embeds with any of its models
    assert built.modelinfo == {"general.context_length": 4096}
    for name in ("ol-model", "oa-model", "oa-embed"):
        ollama.ShowResponse.model_validate(httpx.post(f"{listed.node.url}/api/show", json={"model": name}).json())


def test_version_and_ps(listed: Listed) -> None:
    version = ollama.Client(host=listed.node.url)._request_raw("GET", "/api/version").json()["version"]
    assert tuple(int(p) for p in version.split(".")) >= (0, 12, 0)
    ps = httpx.get(f"{listed.node.url}/api/ps").json()
    assert len(ollama.ProcessResponse.model_validate(ps).models) == 4


@pytest.mark.parametrize("asked", ["ol-model", "ol-model:latest", "oa-model", "oa-model:latest"])
def test_model_named_as_the_caller_named_it(listed: Listed, asked: str) -> None:
    reply = ollama.Client(host=listed.node.url).chat(model=asked, messages=[{"role": "user", "content": "hi"}])
    assert reply.model == asked
    streamed = list(ollama.Client(host=listed.node.url).generate(model=asked, prompt="hi", stream=True))
    assert {p.model for p in streamed} == {asked}
    client = openai.OpenAI(base_url=f"{listed.node.url}/v1", api_key="unused", max_retries=0)
    assert client.chat.completions.create(model=asked, messages=[{"role": "user", "content": "hi"}]).model == asked
    chunks = list(client.chat.completions.create(model=asked, messages=[{"role": "user", "content": "hi"}],
                                                 stream=True))
    assert {c.model for c in chunks} == {asked}
