"""Translation between the Ollama and OpenAI shapes, request and response, streamed and whole."""

from __future__ import annotations

import json

from app.services.backends.base import ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.backends.engine import parse_model_list
from app.services.translate.bodies import translate_body
from app.services.translate.candidates import for_candidates
from app.services.translate.requests import translate_request
from app.services.translate.responses import PassThrough
from app.services.translate.shapes import Api, canonical_model, wants_stream
from app.services.translate.stream_to_ollama import OpenAIToOllama
from app.services.translate.stream_to_openai import OllamaToOpenAI


def test_canonical_names() -> None:
    assert canonical_model("llama3") == "llama3:latest"
    assert canonical_model("llama3:8b") == "llama3:8b"
    assert canonical_model("org/model") == "org/model:latest"
    assert canonical_model("host:5000/org/model") == "host:5000/org/model:latest"


def test_stream_defaults_differ_by_api() -> None:
    assert wants_stream("ollama", "chat", {}) is True
    assert wants_stream("openai", "chat", {}) is False
    assert wants_stream("ollama", "embed", {"stream": True}) is False


def test_ollama_request_to_openai_maps_options_and_asks_for_usage() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
            "options": {"num_predict": 7, "temperature": 0.2, "seed": 3}}
    out = translate_request("ollama", "openai", "chat", body, "m-up")
    assert out["model"] == "m-up" and out["max_tokens"] == 7 and out["temperature"] == 0.2 and out["seed"] == 3
    assert out["stream"] is True and out["stream_options"] == {"include_usage": True}


def test_openai_request_to_ollama() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "max_tokens": 5, "stream": True}
    out = translate_request("openai", "ollama", "chat", body, "m:latest")
    assert out == {"model": "m:latest", "messages": [{"role": "user", "content": "hi"}],
                   "options": {"num_predict": 5}, "stream": True}


def test_same_api_stream_gets_include_usage() -> None:
    out = translate_request("openai", "openai", "chat", {"model": "a", "stream": True}, "b")
    assert out["model"] == "b" and out["stream_options"]["include_usage"] is True


def sse(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def test_openai_stream_to_ollama_ndjson_split_anywhere() -> None:
    upstream = (
        sse({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
        + sse({"choices": [{"index": 0, "delta": {"content": "Hel"}}]})
        + sse({"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "length"}]})
        + sse({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})
        + b"data: [DONE]\n\n"
    )
    translator = OpenAIToOllama("chat", "m")
    out = b"".join(translator.feed(upstream[i:i + 7]) for i in range(0, len(upstream), 7))
    lines = [json.loads(line) for line in out.splitlines()]
    assert "".join(line["message"]["content"] for line in lines) == "Hello"
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "length"
    assert (lines[-1]["prompt_eval_count"], lines[-1]["eval_count"]) == (3, 2)
    assert translator.finished_cleanly


def test_ollama_stream_to_openai_sse() -> None:
    upstream = (json.dumps({"message": {"content": "Hi"}, "done": False}) + "\n"
                + json.dumps({"message": {"content": ""}, "done": True, "done_reason": "stop",
                              "prompt_eval_count": 4, "eval_count": 1}) + "\n").encode()
    translator = OllamaToOpenAI("chat", "m", include_usage=True)
    out = translator.feed(upstream).decode()
    events = [e for e in out.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e[6:]) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[1]["choices"][0]["delta"]["content"] == "Hi"
    assert chunks[2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[3]["usage"] == {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}
    assert translator.usage.completion_tokens == 1


def test_pass_through_reads_usage_and_end() -> None:
    translator = PassThrough("openai")
    data = sse({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 9}}) + b"data: [DONE]\n\n"
    assert translator.feed(data[:10]) + translator.feed(data[10:]) == data
    assert translator.usage.completion_tokens == 9 and translator.finished_cleanly


def test_whole_bodies_both_ways() -> None:
    openai_body = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 2, "completion_tokens": 1}}
    ollama = translate_body("openai", "ollama", "chat", openai_body, "m", 0, {})
    assert ollama["message"]["content"] == "x" and ollama["eval_count"] == 1 and ollama["done"]
    back = translate_body("ollama", "openai", "chat", ollama, "m", 0, {})
    assert back["choices"][0]["message"]["content"] == "x" and back["usage"]["total_tokens"] == 3
    emb = translate_body("openai", "ollama", "embed_legacy", {"data": [{"index": 0, "embedding": [1.0]}]}, "m", 0, {})
    assert emb == {"embedding": [1.0]}


REPEAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "options": {"repeat_penalty": 1.15}}


def test_repeat_penalty_takes_the_engines_own_name() -> None:
    # vLLM reads repetition_penalty (and ignores repeat_penalty); llama.cpp and others read repeat_penalty.
    vllm = translate_request("ollama", "openai", "chat", REPEAT, "m", engine="vllm")
    assert vllm["repetition_penalty"] == 1.15 and "repeat_penalty" not in vllm
    for other in (None, "llamacpp", "tinymodel"):
        out = translate_request("ollama", "openai", "generate", {**REPEAT, "prompt": "once"}, "m", engine=other)
        assert out["repeat_penalty"] == 1.15 and "repetition_penalty" not in out


def test_a_model_its_engine_lists_as_vllms_gets_vllms_names() -> None:
    class Listed(Upstream):
        def __init__(self, owned_by: str) -> None:
            self.key, self.node_name, self.in_flight = f"engine:{owned_by}", "n", 0
            # As the engine's /v1/models answer is kept on refresh: owned_by among the model's details.
            self._models = parse_model_list("openai", {"data": [{"id": "m", "object": "model", "owned_by": owned_by}]})

        def models(self) -> list[ModelEntry]:
            return self._models

        def api_for(self, client_api: Api) -> Api:
            return "openai"

        async def open(self, request: UpstreamRequest) -> Opened:
            raise AssertionError("never asked: only its body is built")

    vllm, llama = Listed("vllm"), Listed("llamacpp")
    bodies, refusals = for_candidates("ollama", "chat", REPEAT, "m:latest", "m", [vllm, llama])
    assert not refusals
    sent = {upstream.key: body for upstream, _api, body in bodies}
    assert sent["engine:vllm"]["repetition_penalty"] == 1.15 and "repeat_penalty" not in sent["engine:vllm"]
    assert sent["engine:llamacpp"]["repeat_penalty"] == 1.15
