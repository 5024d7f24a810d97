"""Every field the node reads, sent with a wrong type: 400 in the caller's API shape naming the field,
before any engine is asked (the job is recorded failed, never queued), at the front door and via a relay."""

from __future__ import annotations

import json
from typing import Any

import httpx
import ollama
import openai
import pytest

from app.services.translate.shapes import PATHS, Api, Operation
from app.services.translate.validate import OLLAMA, OPENAI, Fields, InvalidRequest, ListOf
from tests.cluster.multinode import jobs
from tests.node.conftest import EngineNode

WRONG_VALUES: list[Any] = ["notalist", 12345, 1.5, [1, 2, 3], {"a": 1}, True, [{"x": 1}], ""]
BASE: dict[Api, dict[Operation, dict[str, Any]]] = {
    "ollama": {"chat": {"messages": [{"role": "user", "content": "hi"}]}, "complete": {"prompt": "hi"},
               "embed": {"input": "hi"}, "embed_legacy": {"prompt": "hi"}},
    "openai": {"chat": {"messages": [{"role": "user", "content": "hi"}]}, "complete": {"prompt": "hi"},
               "embed": {"input": "hi"}},
}
NESTED = {"messages[0].content", "messages[0].role", "messages[0].images", "messages[0].tool_calls",
          "options.temperature", "options.num_predict", "options.stop", "response_format.type",
          "stream_options.include_usage", "tools[0].function"}


def wrong_value(api: Api, operation: Operation, path: str) -> Any:
    """A value the schema refuses for ``path`` (the first of WRONG_VALUES that fails its check)."""
    schema = (OLLAMA if api == "ollama" else OPENAI)[operation]
    for value in WRONG_VALUES:
        body = with_field(BASE[api][operation], path, value)
        try:
            schema(body, "")
        except InvalidRequest as exc:
            if exc.field == path:
                return value
    raise AssertionError(f"no wrong value for {path}")


def with_field(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    body = json.loads(json.dumps({"model": "oa-model", **base}))
    if path == "messages[0].content" or path.startswith("messages[0]."):
        body.setdefault("messages", [{"role": "user", "content": "hi"}])[0][path.split(".", 1)[1]] = value
    elif path == "tools[0].function":
        body["tools"] = [{"type": "function", "function": value}]
    elif "." in path:
        outer, inner = path.split(".", 1)
        body[outer] = {inner: value}
    else:
        body[path] = value
    return body


def declared(check: Any, path: str) -> bool:
    """Whether the schema declares ``path`` (one level of list element, one of nesting)."""
    for part in path.replace("[0]", ".[0]").split("."):
        if part == "[0]":
            if not isinstance(check, ListOf):
                return False
            check = check.item
        elif isinstance(check, Fields) and part in check.spec:
            check = check.spec[part]
        else:
            return False
    return True


def cases() -> list[tuple[Api, Operation, str]]:
    found = []
    for api, table in (("ollama", OLLAMA), ("openai", OPENAI)):
        for operation in BASE[api]:
            top = [name for name in table[operation].spec if name != "model"]
            found += [(api, operation, path) for path in [*top, *sorted(NESTED)]
                      if declared(table[operation], path)]
    return found


@pytest.mark.parametrize(("api", "operation", "path"), cases(), ids=lambda v: str(v))
def test_wrong_type_is_400_naming_the_field_and_opens_no_job(engine_node: EngineNode, api: Api,
                                                              operation: Operation, path: str) -> None:
    node = engine_node.node
    body = with_field(BASE[api][operation], path, wrong_value(api, operation, path))
    before = len(jobs(node))
    response = httpx.post(f"{node.url}{PATHS[api][operation]}", json=body, timeout=30)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    message = error if api == "ollama" else error["message"]
    assert f"'{path}'" in message
    if api == "openai":
        assert error["param"] == path and error["type"] == "invalid_request_error"
    # Recorded as a failed job with the reason (never queued or running), and nothing reached an engine.
    assert all(j["state"] == "failed" for j in jobs(node)[: len(jobs(node)) - before])


def test_the_reported_shapes_through_the_real_clients(engine_node: EngineNode) -> None:
    node = engine_node.node
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0)
    wrong: list[Any] = ["notalist", [1, 2, 3]]
    for messages in wrong:
        with pytest.raises(openai.BadRequestError, match="'messages") as raised:
            client.chat.completions.create(model="ol-model", messages=messages)
        assert raised.value.param in ("messages", "messages[0]")
    requests_before = engine_node.ollama_engine.stats()["inferences"]
    for messages in ("notalist", [1, 2, 3]):
        response = httpx.post(f"{node.url}/api/chat", json={"model": "oa-model", "messages": messages})
        assert response.status_code == 400 and "'messages" in response.json()["error"]
    with pytest.raises(ollama.ResponseError, match="'options.temperature' must be a number"):
        ollama.Client(host=node.url).generate(model="oa-model", prompt="hi", options={"temperature": "hot"})
    assert engine_node.ollama_engine.stats()["inferences"] == requests_before
    assert all(j["state"] not in ("queued", "running") for j in jobs(node))
