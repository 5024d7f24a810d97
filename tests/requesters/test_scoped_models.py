"""A scoped key sees only its models, on every route that names a model (issue 26, item 6).

A key limited to ``m1*`` asks, through the real `openai` and `ollama` clients, for a model outside
its patterns by every route that names one: /api/show (the engine's modelfile and template),
GET /v1/models/{id}, both embeddings routes, both chat routes. Each is refused naming the key and
its patterns; the same routes answer for a model inside them, and the listings show only those."""

from __future__ import annotations

import httpx
import ollama
import openai
import pytest

from app.harness import NodeProc, TinyProc

INSIDE, OUTSIDE = "m1-chat", "m2-secret"


@pytest.fixture
def scoped(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> tuple[NodeProc, str]:
    tiny = tiny_factory("--api", "both", "--model", INSIDE, "--model", OUTSIDE)
    node = node_factory("alpha").start()
    node.add_engine("local", tiny.url, api="ollama")
    key = node.cli("keys", "create", "ci", "--models", "m1*").stdout.strip()
    assert key.startswith("pw-")
    return node, key


def test_a_scoped_key_is_refused_every_model_outside_its_patterns(scoped: tuple[NodeProc, str]) -> None:
    node, key = scoped
    oa = openai.OpenAI(base_url=f"{node.url}/v1", api_key=key, max_retries=0, timeout=30)
    ol = ollama.Client(host=node.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    words = "key 'ci' may use only models matching m1*"

    refusals = []
    for attempt in (lambda: oa.models.retrieve(OUTSIDE), lambda: oa.embeddings.create(model=OUTSIDE, input="x"),
                    lambda: oa.chat.completions.create(model=OUTSIDE, messages=[{"role": "user", "content": "x"}])):
        with pytest.raises(openai.PermissionDeniedError) as refused:
            attempt()
        refusals.append(str(refused.value))
    for ollama_attempt in (lambda: ol.show(OUTSIDE), lambda: ol.embed(model=OUTSIDE, input="x"),
                           lambda: ol.chat(model=OUTSIDE, messages=[{"role": "user", "content": "x"}])):
        with pytest.raises(ollama.ResponseError) as ollama_refused:
            ollama_attempt()
        assert ollama_refused.value.status_code == 403
        refusals.append(str(ollama_refused.value))
    legacy = httpx.post(f"{node.url}/api/embeddings", json={"model": OUTSIDE, "prompt": "x"},
                        headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert legacy.status_code == 403
    refusals.append(legacy.text)
    assert all(words in text for text in refusals), refusals
    assert all("TEMPLATE" not in text and "modelfile" not in text.lower() for text in refusals)

    # Inside its patterns, every route answers; the listings hold only those models.
    assert oa.models.retrieve(INSIDE).id == INSIDE
    assert ol.show(INSIDE) is not None
    assert len(oa.embeddings.create(model=INSIDE, input="x").data[0].embedding) > 0
    assert [m.id for m in oa.models.list()] == [INSIDE]
    assert [m.model for m in ol.list().models] == [INSIDE]
    # Without a key (a local app) nothing changes.
    assert openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused").models.retrieve(OUTSIDE).id == OUTSIDE
