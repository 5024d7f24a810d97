"""Listings that tell the truth through every hop: /api/show of a peer's model is its engine's own
answer, an OpenAI-API engine's model says tools/vision where the engine does (llama.cpp's /props),
/api/ps lists what engines report loaded; Ollama's management routes, unknown routes and OPTIONS
answer in the caller's shape, and no answer carries Access-Control-Allow-Origin."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import ollama
import openai
import pytest

from app.harness import NodeProc, TinyProc
from tests.cluster.multinode import FAST, pair, wait_models


@dataclass
class Duo:
    serving: NodeProc
    origin: NodeProc
    ollama_engine: TinyProc


@pytest.fixture(scope="module")
def duo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Duo]:
    root: Path = tmp_path_factory.mktemp("truth")
    procs: list[TinyProc | NodeProc] = []
    try:
        procs.append(ol := TinyProc("--api", "ollama", "--model", "hot:latest", "--model", "cold:latest",
                                    "--loaded", "hot:latest"))
        procs.append(vis := TinyProc("--api", "openai", "--model", "vis-model", "--props"))
        procs.append(plain := TinyProc("--api", "openai", "--model", "plain-model"))
        procs.append(alpha := NodeProc(root / "home-alpha", "alpha", env=FAST).start())
        procs.append(beta := NodeProc(root / "home-beta", "beta", env=FAST).start())
        alpha.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama")
        alpha.cli("engines", "add", "vis", "--url", vis.url, "--api", "openai")
        alpha.cli("engines", "add", "plain", "--url", plain.url, "--api", "openai")
        pair(alpha, beta)
        wait_models(beta, alpha, "hot:latest", "cold:latest", "vis-model", "plain-model")
        yield Duo(alpha, beta, ol)
    finally:
        for proc in reversed(procs):
            proc.stop()


def test_show_of_a_peers_model_is_its_engines_own_answer(duo: Duo) -> None:
    engine = httpx.post(f"{duo.ollama_engine.url}/api/show", json={"model": "hot"}).json()
    for node in (duo.serving, duo.origin):
        shown = ollama.Client(host=node.url).show("hot")
        assert shown.capabilities == engine["capabilities"] == ["completion", "tools", "thinking"]
        assert shown.modelinfo == engine["model_info"] and shown.template == engine.get("template")
        assert shown.details and shown.details.family == "tiny"


def test_openai_engine_models_say_tools_and_vision_where_the_engine_does(duo: Duo) -> None:
    for node in (duo.serving, duo.origin):
        client = ollama.Client(host=node.url)
        # the owning node probes its engine for embeddings; a peer says what its own node learnt
        assert client.show("vis-model").capabilities == ["completion", "tools", "vision", "embedding"], node.name
        assert client.show("plain-model").capabilities == ["completion", "embedding"], node.name


def test_ps_lists_what_engines_report_loaded(duo: Duo) -> None:
    for node in (duo.serving, duo.origin):
        ps = ollama.Client(host=node.url).ps()
        names = sorted(m.model or "" for m in ps.models)
        # cold is pulled but not loaded; an OpenAI-API server holds what it serves
        assert names == ["hot:latest", "plain-model", "vis-model"], node.name


@pytest.mark.parametrize("method,path,action", [
    ("POST", "/api/pull", "pull"), ("POST", "/api/push", "push"), ("POST", "/api/create", "create"),
    ("POST", "/api/copy", "copy"), ("DELETE", "/api/delete", "delete"), ("POST", "/api/blobs/sha256:abc", "blobs")])
def test_ollama_management_routes_say_what_to_do(duo: Duo, method: str, path: str, action: str) -> None:
    response = httpx.request(method, f"{duo.origin.url}{path}", json={"model": "x"})
    assert response.status_code == 501
    error = response.json()["error"]
    assert error.startswith("Pairwise answers at this address") and f"ollama {action}" in error
    assert "OLLAMA_HOST" in error
    with pytest.raises(ollama.ResponseError, match="does not pull models") as raised:
        ollama.Client(host=duo.serving.url).pull("x")
    assert duo.ollama_engine.url in str(raised.value)  # the engine where pulling works
    assert httpx.head(f"{duo.origin.url}/api/blobs/sha256:abc").status_code == 501


def test_unknown_routes_answer_in_the_callers_shape(duo: Duo) -> None:
    ollama_side = httpx.get(f"{duo.origin.url}/api/nothing")
    assert ollama_side.status_code == 404 and "Pairwise has no route GET /api/nothing" in ollama_side.json()["error"]
    with pytest.raises(openai.NotFoundError, match="no route POST /v1/audio/speech"):
        openai.OpenAI(base_url=f"{duo.origin.url}/v1", api_key="x", max_retries=0).audio.speech.create(
            model="m", voice="alloy", input="hi")
    anthropic_side = httpx.get(f"{duo.origin.url}/v1/messages/batches")
    assert anthropic_side.status_code == 404 and anthropic_side.json()["type"] == "error"
    wrong_method = httpx.get(f"{duo.origin.url}/api/chat")
    assert wrong_method.status_code == 405 and wrong_method.headers["Allow"] == "OPTIONS, POST"
    assert "takes OPTIONS, POST" in wrong_method.json()["error"]


def test_options_answers_allowed_methods_and_refuses_browser_preflights(duo: Duo) -> None:
    for path, allowed in (("/api/chat", "OPTIONS, POST"), ("/v1/models", "GET, HEAD, OPTIONS"),
                          ("/v1/responses", "OPTIONS, POST")):
        answer = httpx.options(f"{duo.origin.url}{path}")
        assert answer.status_code == 204 and answer.headers["Allow"] == allowed, path
        assert "access-control-allow-origin" not in answer.headers
    for origin in ("https://evil.example", "http://localhost:3000"):
        preflight = httpx.options(f"{duo.origin.url}/api/chat", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers
    answered = httpx.post(f"{duo.origin.url}/api/chat", headers={"Origin": "http://localhost:3000"},
                          json={"model": "hot", "stream": False, "messages": [{"role": "user", "content": "hi"}]})
    assert "access-control-allow-origin" not in answered.headers
