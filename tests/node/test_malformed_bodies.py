"""Bodies of a shape no field table checks, found when the translators' JSON was typed (issue 29):
each is a clear error naming the field or the engine (400 or 502), never the node's 500 that an
unexpected type inside a translator used to give."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import jobs
from tests.node.conftest import EngineNode


def post(engine_node: EngineNode, path: str, body: dict) -> httpx.Response:
    return httpx.post(f"{engine_node.node.url}{path}", json=body, timeout=60, trust_env=False)


def test_a_responses_content_part_that_is_no_object_is_named(engine_node: EngineNode) -> None:
    answer = post(engine_node, "/v1/responses", {"model": "oa-model", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}, 5]}]})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["param"] == "input[0].content[1]" and "must be a content part object" in error["message"]


@pytest.mark.parametrize(("content", "field"), [(5, "messages[1].content[0].content"),
                                                ([{"type": "text", "text": "sunny"}, "x"],
                                                 "messages[1].content[0].content[1]")])
def test_an_anthropic_tool_result_content_of_no_blocks_is_named(engine_node: EngineNode, content: object,
                                                                field: str) -> None:
    answer = post(engine_node, "/v1/messages", {"model": "oa-model", "max_tokens": 5, "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}]}]})
    assert answer.status_code == 400
    assert answer.json()["type"] == "error" and f"'{field}' must be" in answer.json()["error"]["message"]


def test_an_anthropic_image_whose_source_is_no_object_is_refused_by_name(engine_node: EngineNode) -> None:
    answer = post(engine_node, "/v1/messages", {"model": "oa-model", "max_tokens": 5, "messages": [
        {"role": "user", "content": [{"type": "image", "source": "a picture"}]}]})
    assert answer.status_code == 400
    assert "messages[0].content[0].source.type" in answer.json()["error"]["message"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/chat"])
def test_an_engine_answer_that_is_no_json_object_fails_the_job_naming_the_engine(engine_node: EngineNode,
                                                                                path: str) -> None:
    before = {j["id"] for j in jobs(engine_node.node)}
    engine_node.openai_engine.config(fail_mode="not_an_object")
    try:
        answer = post(engine_node, path, {"model": "oa-model", "stream": False,
                                          "messages": [{"role": "user", "content": "hi"}]})
    finally:
        engine_node.openai_engine.config(fail_mode=None)
    assert answer.status_code == 502
    error = answer.json()["error"]
    message = error["message"] if isinstance(error, dict) else error
    assert message == "oa answered in a shape Pairwise cannot translate: not a JSON object"

    def finished() -> list[dict] | None:
        mine = [j for j in jobs(engine_node.node) if j["id"] not in before]
        return mine if mine and all(j["state"] not in ("queued", "running") for j in mine) else None

    assert [j["state"] for j in wait_until(finished, what="the job finished")] == ["failed"]


def test_an_engine_model_list_that_is_no_object_is_the_engines_error(tmp_path: Path) -> None:
    tiny = TinyProc("--api", "openai", "--model", "oa-model", "--fail-mode", "not_an_object")
    node = NodeProc(tmp_path / "home", "alpha")
    try:
        node.start()
        node.cli("engines", "add", "oa", "--url", tiny.url, "--api", "openai")
        engines = node.control("GET", "/engines")["engines"]
        assert [(e["name"], e["models"], e["error"]) for e in engines] == [
            ("oa", [], "engine oa answered a model list that is not a JSON object")]
    finally:
        node.stop()
        tiny.stop()
