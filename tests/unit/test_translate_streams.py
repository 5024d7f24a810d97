"""Stream translation of the fields beyond text, however the upstream's bytes are cut."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.services.translate.responses import PassThrough, StreamTranslator
from app.services.translate.stream_to_ollama import OpenAIToOllama
from app.services.translate.stream_to_openai import OllamaToOpenAI


def sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def delta(d: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    return sse({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "up",
                "choices": [{"index": 0, "delta": d, "finish_reason": finish}], **extra})


OPENAI_TOOL_STREAM = b"".join([
    delta({"role": "assistant", "content": ""}),
    delta({"reasoning_content": "hmm"}),
    delta({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}]}),
    delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": '}}]}),
    delta({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
    delta({}, "tool_calls"),
    sse({"id": "c", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
    b"data: [DONE]\n\n",
])
OLLAMA_TOOL_STREAM = b"".join(json.dumps(o).encode() + b"\n" for o in [
    {"model": "up", "message": {"role": "assistant", "content": "", "thinking": "hmm"}, "done": False},
    {"model": "up", "message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": {"a": 1}}}]}, "done": False},
    {"model": "up", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
     "prompt_eval_count": 3, "eval_count": 4},
])


def run(translator: StreamTranslator, data: bytes, size: int) -> bytes:
    out = b"".join(translator.feed(data[i:i + size]) for i in range(0, len(data), size))
    return out + translator.finish()


@pytest.mark.parametrize("size", [1, 7, 64, 10_000])
def test_openai_tool_call_deltas_become_one_whole_ollama_call(size: int) -> None:
    translator = OpenAIToOllama("chat", "asked")
    lines = [json.loads(line) for line in run(translator, OPENAI_TOOL_STREAM, size).splitlines()]
    assert lines[0]["message"]["thinking"] == "hmm"
    assert [c for line in lines for c in line["message"].get("tool_calls", [])] == [
        {"function": {"name": "f", "arguments": {"a": 1}}}]
    assert lines[-1]["done"] and lines[-1]["eval_count"] == 4 and {line["model"] for line in lines} == {"asked"}
    assert translator.finished_cleanly


@pytest.mark.parametrize("size", [1, 7, 64, 10_000])
@pytest.mark.parametrize("include_usage", [False, True])
def test_ollama_tool_calls_become_openai_deltas(size: int, include_usage: bool) -> None:
    out = run(OllamaToOpenAI("chat", "asked", include_usage), OLLAMA_TOOL_STREAM, size)
    events = [json.loads(line[6:]) for line in out.split(b"\n\n") if line.startswith(b"data: {")]
    calls = [c for e in events for ch in e["choices"] for c in ch["delta"].get("tool_calls", [])]
    assert len(calls) == 1 and calls[0]["index"] == 0 and calls[0]["id"].startswith("call_")
    assert json.loads(calls[0]["function"]["arguments"]) == {"a": 1}
    assert [ch["finish_reason"] for e in events for ch in e["choices"] if ch["finish_reason"]] == ["tool_calls"]
    assert any(ch["delta"].get("reasoning_content") == "hmm" for e in events for ch in e["choices"])
    assert any(e["choices"] == [] for e in events) is include_usage
    assert out.endswith(b"data: [DONE]\n\n")


@pytest.mark.parametrize("size", [1, 5, 64, 10_000])
@pytest.mark.parametrize("asked_for_usage", [False, True])
def test_pass_through_names_the_model_as_asked_and_keeps_usage_chunk_only_if_asked(size: int,
                                                                                   asked_for_usage: bool) -> None:
    translator = PassThrough("openai", "asked", "up", keep_usage_chunk=asked_for_usage)
    out = run(translator, OPENAI_TOOL_STREAM, size)
    assert b'"model": "up"' not in out and out.count(b'"model": "asked"') == 6
    assert (b'"choices": []' in out) is asked_for_usage
    assert translator.usage.completion_tokens == 4 and translator.finished_cleanly
    assert out.endswith(b"data: [DONE]\n\n")
