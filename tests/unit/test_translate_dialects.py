"""The Responses store's bounds, and the dialect translators' edges no client reaches easily."""

from __future__ import annotations

import pytest

from app.services.translate.anthropic_request import anthropic_to_chat
from app.services.translate.refusal import Unsupported
from app.services.translate.resp_request import responses_to_chat
from app.services.translate.resp_store import ResponseStore


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_store_is_bounded_in_count_and_names_what_it_let_go() -> None:
    store = ResponseStore(max_count=2, max_age_s=60, clock=Clock())
    for n in range(3):
        store.keep(f"resp_{n}", [{"role": "user", "content": str(n)}])
    assert len(store) == 2 and store.conversation("resp_2") == [{"role": "user", "content": "2"}]
    with pytest.raises(Unsupported, match="resp_0' has expired: this node keeps the last 2 responses"):
        store.conversation("resp_0")
    with pytest.raises(Unsupported, match="'resp_x' is unknown here"):
        store.conversation("resp_x")


def test_store_is_bounded_in_age() -> None:
    clock = Clock()
    store = ResponseStore(max_count=10, max_age_s=60, clock=clock)
    store.keep("resp_a", [])
    clock.now = 59
    assert store.conversation("resp_a") == []
    clock.now = 61
    with pytest.raises(Unsupported, match="has expired"):
        store.conversation("resp_a")
    assert len(store) == 0


def test_store_hands_out_copies() -> None:
    store = ResponseStore()
    store.keep("resp_a", [{"role": "user", "content": "a"}])
    store.conversation("resp_a").append({"role": "user", "content": "b"})
    assert store.conversation("resp_a") == [{"role": "user", "content": "a"}]


def test_responses_consecutive_function_calls_are_one_assistant_turn() -> None:
    chat = responses_to_chat({"model": "m", "input": [
        {"role": "user", "content": "both"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": [{"type": "input_text", "text": "2"}]},
        {"type": "reasoning", "id": "rs", "summary": []}]}, [])
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in chat["messages"][1]["tool_calls"]] == ["a", "b"]
    assert chat["messages"][3]["content"] == "2"


@pytest.mark.parametrize("body,field", [
    ({"background": True}, "background"),
    ({"input": [{"type": "item_reference", "id": "x"}]}, "input[0].type"),
    ({"tool_choice": {"type": "allowed_tools", "tools": []}}, "tool_choice"),
])
def test_responses_refusals_name_the_field(body: dict, field: str) -> None:
    with pytest.raises(Unsupported) as raised:
        responses_to_chat({"model": "m", "input": "hi", **body}, [])
    assert raised.value.field == field


def test_anthropic_tool_results_come_first_and_choices_translate() -> None:
    chat = anthropic_to_chat({"model": "m", "max_tokens": 5, "system": [{"type": "text", "text": "sys"}],
                              "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
                              "tools": [{"name": "f", "input_schema": {"type": "object"}}],
                              "thinking": {"type": "enabled", "budget_tokens": 2048},
                              "messages": [{"role": "user", "content": "go"},
                                           {"role": "assistant", "content": [
                                               {"type": "thinking", "thinking": "hm", "signature": ""},
                                               {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}]},
                                           {"role": "user", "content": [
                                               {"type": "text", "text": "and?"},
                                               {"type": "tool_result", "tool_use_id": "t1", "content": "x",
                                                "is_error": True}]}]})
    assert chat["messages"][0] == {"role": "system", "content": "sys"}
    assert chat["messages"][2]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}
    assert chat["messages"][3] == {"role": "tool", "tool_call_id": "t1", "content": "error: x"}
    assert chat["messages"][4] == {"role": "user", "content": "and?"}
    assert chat["tool_choice"] == "required" and chat["parallel_tool_calls"] is False
    assert chat["reasoning_effort"] == "low" and chat["max_tokens"] == 5


def test_anthropic_none_choice_offers_no_tools() -> None:
    chat = anthropic_to_chat({"model": "m", "max_tokens": 5, "tool_choice": {"type": "none"},
                              "tools": [{"name": "f", "input_schema": {"type": "object"}}],
                              "messages": [{"role": "user", "content": "go"}]})
    assert "tools" not in chat
