"""Every field the tables say is passed or translated arrives: sent through the translator, it
changes what the engine gets (a field marked "passed" that the code forgot fails here)."""

from __future__ import annotations

from typing import Any

import pytest

from app.services.translate.fields import OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA, Table
from app.services.translate.requests import translate_request
from app.services.translate.shapes import Api, Operation

USER = {"role": "user", "content": "hi"}
CALL = {"function": {"name": "f", "arguments": {"a": 1}}}
OAI_CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
PNG = "iVBORw0KGgo="

# field -> (operation, the body with it); the same body without the field must translate differently.
OLLAMA_SAMPLES: dict[str, tuple[Operation, dict[str, Any]]] = {
    "model": ("chat", {"model": "caller-name", "messages": [USER]}),
    "messages": ("chat", {"messages": [USER]}),
    "messages[].role": ("chat", {"messages": [{**USER, "role": "system"}]}),
    "messages[].content": ("chat", {"messages": [USER]}),
    "messages[].images": ("chat", {"messages": [{**USER, "images": [PNG]}]}),
    "messages[].tool_calls": ("chat", {"messages": [USER, {"role": "assistant", "content": "", "tool_calls": [CALL]}]}),
    "messages[].tool_name": ("chat", {"messages": [USER, {"role": "assistant", "content": "", "tool_calls": [CALL]},
                                                   {"role": "tool", "content": "1", "tool_name": "f"}]}),
    "prompt": ("complete", {"prompt": "once"}),
    "system": ("complete", {"prompt": "once", "system": "be brief"}),
    "suffix": ("complete", {"prompt": "once", "suffix": "end"}),
    "tools": ("chat", {"messages": [USER], "tools": [TOOL]}),
    "format": ("chat", {"messages": [USER], "format": "json"}),
    "think": ("chat", {"messages": [USER], "think": "high"}),
    "logprobs": ("chat", {"messages": [USER], "logprobs": True}),
    "top_logprobs": ("chat", {"messages": [USER], "logprobs": True, "top_logprobs": 3}),
    "stream": ("chat", {"messages": [USER], "stream": False}),
    "input": ("embed", {"input": "text"}),
    "dimensions": ("embed", {"input": "text", "dimensions": 8}),
    "options": ("chat", {"messages": [USER], "options": {"seed": 1}}),
    **{f"options.{name}": ("chat", {"messages": [USER], "options": {name: value}}) for name, value in {
        "temperature": 0.5, "top_p": 0.5, "seed": 4, "stop": ["x"], "presence_penalty": 0.1,
        "frequency_penalty": 0.1, "num_predict": 9, "top_k": 5, "min_p": 0.1, "repeat_penalty": 1.1,
        "num_ctx": 100}.items()},
}

OPENAI_SAMPLES: dict[str, tuple[Operation, dict[str, Any]]] = {
    "model": ("chat", {"model": "caller-name", "messages": [USER]}),
    "messages": ("chat", {"messages": [USER]}),
    "messages[].role": ("chat", {"messages": [{**USER, "role": "system"}]}),
    "messages[].content": ("chat", {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}),
    "messages[].content[].type": ("chat", {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]}),
    "messages[].content[].text": ("chat", {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]}),
    "messages[].content[].image_url": ("chat", {"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]}]}),
    "messages[].tool_calls": ("chat", {"messages": [USER, {"role": "assistant", "content": None,
                                                           "tool_calls": [OAI_CALL]}]}),
    "messages[].tool_call_id": ("chat", {"messages": [USER, {"role": "assistant", "content": None,
                                                             "tool_calls": [OAI_CALL]},
                                                      {"role": "tool", "tool_call_id": "call_1", "content": "1"}]}),
    "prompt": ("complete", {"prompt": "once"}),
    "suffix": ("complete", {"prompt": "once", "suffix": "end"}),
    "tools": ("chat", {"messages": [USER], "tools": [TOOL]}),
    "tool_choice": ("chat", {"messages": [USER], "tools": [TOOL], "tool_choice": "required"}),
    "parallel_tool_calls": ("chat", {"messages": [USER], "tools": [TOOL], "parallel_tool_calls": False}),
    "response_format": ("chat", {"messages": [USER], "response_format": {"type": "json_object"}}),
    "reasoning_effort": ("chat", {"messages": [USER], "reasoning_effort": "low"}),
    **{name: ("chat", {"messages": [USER], name: value}) for name, value in {
        "temperature": 0.5, "top_p": 0.5, "top_k": 5, "min_p": 0.1, "seed": 4, "stop": ["x"],
        "presence_penalty": 0.1, "frequency_penalty": 0.1, "max_tokens": 9, "max_completion_tokens": 9}.items()},
    "n": ("chat", {"messages": [USER], "n": 1}),
    "logprobs": ("chat", {"messages": [USER], "logprobs": True}),
    "top_logprobs": ("chat", {"messages": [USER], "logprobs": True, "top_logprobs": 3}),
    "stream": ("chat", {"messages": [USER], "stream": True}),
    "stream_options": ("chat", {"messages": [USER], "stream": True, "stream_options": {"include_usage": True}}),
    "input": ("embed", {"input": "text"}),
    "dimensions": ("embed", {"input": "text", "dimensions": 8}),
    "encoding_format": ("embed", {"input": "text", "encoding_format": "base64"}),
}

# Fields whose effect is on the answer, not on the engine's request (checked in test_translate*.py):
ANSWER_SIDE = {("openai", "n"), ("openai", "stream_options"), ("openai", "encoding_format"),
               ("openai", "parallel_tool_calls")}


def without(body: dict[str, Any], field: str) -> dict[str, Any]:
    """The body without ``field`` (a dotted or ``[]`` path), or with its innermost holder's key removed."""
    out = {k: v for k, v in body.items()}
    head = field.split(".")[0].split("[")[0]
    if "[]" in field:
        leaf = field.rsplit(".", 1)[-1].split("[")[0]
        out["messages"] = [{**m, "content": ""} if "content[]" in field else
                           {k: v for k, v in m.items() if k != leaf} for m in body["messages"]]
        if leaf in ("tool_calls",):
            out["messages"] = [m for m in out["messages"] if m["role"] != "assistant" or m.get("content")]
        if leaf in ("tool_name", "tool_call_id"):
            out["messages"] = [m for m in out["messages"] if m["role"] != "tool"]
        return out
    if "." in field:
        options = {k: v for k, v in body[head].items() if k != field.split(".", 1)[1]}
        out[head] = options
        return out
    if head == "model":
        return {**out, "model": "m"}
    out.pop(head, None)
    return out


def arrivals(source: Api, table: Table, samples: dict[str, tuple[Operation, dict[str, Any]]]) -> list[str]:
    return [name for name, row in table.items() if row.fate in ("passed", "translated")
            and (source, name) not in ANSWER_SIDE]


@pytest.mark.parametrize("source,table,samples", [("ollama", OLLAMA_TO_OPENAI, OLLAMA_SAMPLES),
                                                  ("openai", OPENAI_TO_OLLAMA, OPENAI_SAMPLES)])
def test_every_passed_or_translated_field_arrives(source: Api, table: Table,
                                                  samples: dict[str, tuple[Operation, dict[str, Any]]]) -> None:
    target: Api = "openai" if source == "ollama" else "ollama"
    missing = [name for name in arrivals(source, table, samples) if name not in samples]
    assert not missing, f"give these fields a sample so their arrival is tested: {missing}"
    for name in arrivals(source, table, samples):
        operation, body = samples[name]
        body = {"model": "m", **body}
        sent = translate_request(source, target, operation, body, "engine-name", context_length=4096)
        base = translate_request(source, target, operation, without(body, name), "engine-name",
                                 context_length=4096)
        if name == "model":
            assert sent["model"] == "engine-name", name
            continue
        if name == "options.num_ctx":  # accepted (the window is known and large enough): nothing to send
            continue
        assert sent != base, f"{name} is marked {table[name].fate} but does not reach the engine"


def test_answer_side_fields_are_known_fields() -> None:
    for source, name in ANSWER_SIDE:
        table = OLLAMA_TO_OPENAI if source == "ollama" else OPENAI_TO_OLLAMA
        assert table[name].fate in ("passed", "translated")


# The two dialects: every passed or translated field changes the Chat Completions request made of it.
RESPONSES_SAMPLES: dict[str, dict[str, Any]] = {
    "model": {"model": "other"},
    "input": {"input": "another"},
    "input[].message": {"input": [{"role": "developer", "content": "x"}]},
    "input[].input_image": {"input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]}]},
    "input[].function_call": {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]},
    "input[].function_call_output": {"input": [{"type": "function_call_output", "call_id": "c", "output": "1"}]},
    "instructions": {"instructions": "be brief"},
    "previous_response_id": {"previous_response_id": "resp_kept"},
    "tools": {"tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]},
    "tool_choice": {"tool_choice": "required"},
    "parallel_tool_calls": {"parallel_tool_calls": False},
    "text": {"text": {"format": {"type": "json_object"}}},
    "max_output_tokens": {"max_output_tokens": 5},
    "temperature": {"temperature": 0.5},
    "top_p": {"top_p": 0.5},
    "reasoning": {"reasoning": {"effort": "high"}},
    "stream": {"stream": True},
}
ANSWER_SIDE_RESPONSES = {"store"}  # whether the answer is kept: checked in tests/node/test_responses_api.py

ANTHROPIC_SAMPLES: dict[str, dict[str, Any]] = {
    "model": {"model": "other"},
    "max_tokens": {"max_tokens": 7},
    "messages": {"messages": [{"role": "user", "content": "another"}]},
    "messages[].content[].text": {"messages": [{"role": "user", "content": [{"type": "text", "text": "t"}]}]},
    "messages[].content[].image": {"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}]},
    "messages[].content[].tool_use": {"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]},
    "messages[].content[].tool_result": {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "1"}]}]},
    "system": {"system": "be brief"},
    "tools": {"tools": [{"name": "f", "input_schema": {"type": "object"}}]},
    "tool_choice": {"tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "any"}},
    "stop_sequences": {"stop_sequences": ["x"]},
    "temperature": {"temperature": 0.5},
    "top_p": {"top_p": 0.5},
    "top_k": {"top_k": 5},
    "thinking": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
    "output_config": {"output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}}},
    "stream": {"stream": True},
}


def test_every_passed_or_translated_dialect_field_arrives() -> None:
    from app.services.translate.anthropic_request import anthropic_to_chat
    from app.services.translate.fields_dialects import ANTHROPIC_TO_CHAT, RESPONSES_TO_CHAT
    from app.services.translate.resp_request import responses_to_chat

    kept = [{"role": "user", "content": "earlier"}]
    for table, samples, base, translate, skip in (
            (RESPONSES_TO_CHAT, RESPONSES_SAMPLES, {"model": "m", "input": "hi"},
             lambda b: responses_to_chat(b, kept if b.get("previous_response_id") else []), ANSWER_SIDE_RESPONSES),
            (ANTHROPIC_TO_CHAT, ANTHROPIC_SAMPLES, {"model": "m", "max_tokens": 3,
                                                    "messages": [{"role": "user", "content": "hi"}]},
             anthropic_to_chat, set())):
        names = [n for n, row in table.items() if row.fate in ("passed", "translated") and n not in skip]
        missing = [n for n in names if n not in samples]
        assert not missing, f"give these fields a sample so their arrival is tested: {missing}"
        before = translate(dict(base))
        for name in names:
            assert translate({**base, **samples[name]}) != before, f"{name} does not reach the chat request"
