"""Every field a table checks (app/services/translate/fields.py, fields_dialects.py), on every route
the front door speaks, sent a wrong value: 400 in the caller's API shape naming the field, before any
engine is asked (the job is recorded failed, never queued). The cases are walked from the schemas
validation is made of, so a row added to a table is tested here with no edit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import openai
import pytest

from app.services.translate.checks import AllOf, Check, Each, Fields, InvalidRequest, ListOf, Range
from app.services.translate.validate import ANTHROPIC, OLLAMA, OPENAI, RESPONSES
from tests.cluster.multinode import jobs
from tests.node.conftest import EngineNode

USER = {"role": "user", "content": "hi"}
# route -> (the caller's error shape, the schema its bodies are checked by, a body that passes it)
ROUTES: dict[str, tuple[str, Fields, dict[str, Any]]] = {
    "/api/chat": ("ollama", OLLAMA["chat"], {"model": "oa-model", "messages": [USER]}),
    "/api/generate": ("ollama", OLLAMA["complete"], {"model": "oa-model", "prompt": "hi"}),
    "/api/embed": ("ollama", OLLAMA["embed"], {"model": "oa-model", "input": "hi"}),
    "/api/embeddings": ("ollama", OLLAMA["embed_legacy"], {"model": "oa-model", "prompt": "hi"}),
    "/v1/chat/completions": ("openai", OPENAI["chat"], {"model": "ol-model", "messages": [USER]}),
    "/v1/completions": ("openai", OPENAI["complete"], {"model": "ol-model", "prompt": "hi"}),
    "/v1/embeddings": ("openai", OPENAI["embed"], {"model": "ol-model", "input": "hi"}),
    "/v1/responses": ("responses", RESPONSES, {"model": "ol-model", "input": "hi"}),
    "/v1/messages": ("anthropic", ANTHROPIC["create"], {"model": "ol-model", "max_tokens": 5, "messages": [USER]}),
    "/v1/messages/count_tokens": ("anthropic", ANTHROPIC["count"], {"model": "ol-model", "messages": [USER]}),
}
WRONG_VALUES: list[Any] = ["notalist", 12345, 1.5, [1, 2, 3], {"a": 1}, True, [{"x": 1}], ""]


def parts(check: Check) -> tuple[Check, ...]:
    return check.checks if isinstance(check, AllOf) else (check,)


def structural(check: Check) -> bool:
    """Only the checks of what the rows declare inside (nothing of its own to refuse)."""
    return all(isinstance(p, Each) or (isinstance(p, Fields) and p.loose) for p in parts(check))


def walk(check: Check, path: str = "") -> Iterator[tuple[str, Check]]:
    """Every path a schema checks on its own (inside a one-of, the one-of's path is the one named)."""
    for part in parts(check):
        if isinstance(part, Fields):
            for name, inner in part.spec.items():
                inner_path = f"{path}.{name}" if path else name
                if not structural(inner):
                    yield inner_path, inner
                yield from walk(inner, inner_path)
        elif isinstance(part, (ListOf, Each)):
            if not structural(part.item):
                yield f"{path}[0]", part.item
            yield from walk(part.item, f"{path}[0]")


def placed(check: Check, current: Any, path: list[str], value: Any) -> Any:
    """``current`` (a value ``check`` takes) with ``value`` at ``path``; what is missing on the way is
    made from the checks' samples, so every other field stays valid."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    for part in parts(check):
        try:
            if head == "[0]" and isinstance(part, (ListOf, Each)):
                element = current[0] if isinstance(current, list) and current else part.item.sample
                return [placed(part.item, element, rest, value)]
            if head != "[0]" and isinstance(part, Fields) and head in part.spec:
                base = dict(current) if isinstance(current, dict) else dict(part.sample)
                base[head] = placed(part.spec[head], base.get(head), rest, value)
                return base
        except LookupError:
            continue  # another part of the check declares the rest of the path
    raise LookupError(f"{check.what} declares no {head}")


def split(path: str) -> list[str]:
    return [p for p in path.replace("[0]", ".[0]").split(".") if p]


def body_with(route: str, path: str, value: Any) -> dict[str, Any]:
    _shape, made, base = ROUTES[route]
    return placed(made, json.loads(json.dumps(base)), split(path), value)


def refused_at(made: Fields, body: dict[str, Any], path: str) -> bool:
    try:
        made(body, "")
    except InvalidRequest as exc:
        return exc.field == path
    return False


def wrong_value(route: str, path: str, check: Check) -> Any:
    """A value the schema refuses at ``path``: out of its range if it has one, else of a wrong type."""
    made = ROUTES[route][1]
    ranges = [p for p in parts(check) if isinstance(p, Range)]
    candidates = [r.high + 1 if r.high is not None else (r.low or 0) - 1 for r in ranges] + WRONG_VALUES
    for value in candidates:
        if refused_at(made, body_with(route, path, value), path):
            return value
    raise AssertionError(f"no wrong value for {path} on {route}")


def cases() -> list[tuple[str, str, bool]]:
    found = []
    for route, (_shape, made, base) in ROUTES.items():
        assert not refused_at(made, base, ""), route
        made(base, "")  # the base body itself passes
        for path, check in dict(walk(made)).items():
            if path != "model":
                found.append((route, path, False))
                if any(isinstance(p, Range) for p in parts(check)):
                    found.append((route, path, True))
    return found


def check_at(route: str, path: str) -> Check:
    return dict(walk(ROUTES[route][1]))[path]


def test_the_walk_reaches_nested_and_dialect_fields() -> None:
    walked = {(route, path) for route, path, _ in cases()}
    for expected in (("/api/chat", "options.temperature"), ("/api/chat", "messages[0].tool_calls[0].function.name"),
                     ("/v1/chat/completions", "messages[0].content[0].image_url"),
                     ("/v1/chat/completions", "response_format.type"), ("/v1/embeddings", "encoding_format"),
                     ("/v1/responses", "text.format.type"), ("/v1/messages", "max_tokens"),
                     ("/v1/messages/count_tokens", "thinking.budget_tokens")):
        assert expected in walked, expected


@pytest.mark.parametrize(("route", "path", "out_of_range"), cases(), ids=lambda v: str(v))
def test_wrong_value_is_400_naming_the_field_and_opens_no_job(engine_node: EngineNode, route: str, path: str,
                                                               out_of_range: bool) -> None:
    node = engine_node.node
    shape, made, _ = ROUTES[route]
    check = check_at(route, path)
    if out_of_range:
        limit = next(p for p in parts(check) if isinstance(p, Range))
        value: Any = limit.high + 1 if limit.high is not None else (limit.low or 0) - 1
        assert refused_at(made, body_with(route, path, value), path)
    else:
        value = wrong_value(route, path, check)
    before = len(jobs(node))
    response = httpx.post(f"{node.url}{route}", json=body_with(route, path, value), timeout=30)
    assert response.status_code == 400, response.text
    answer = response.json()
    if shape == "ollama":
        message = answer["error"]
    elif shape == "anthropic":
        assert answer["type"] == "error" and answer["error"]["type"] == "invalid_request_error"
        message = answer["error"]["message"]
    else:
        error = answer["error"]
        assert error["param"] == path and error["type"] == "invalid_request_error"
        message = error["message"]
    assert f"'{path}'" in message
    if out_of_range:
        assert limit.what in message  # e.g. "must be a number from 0 to 2"
    # Recorded as a failed job with the reason (never queued or running), and nothing reached an engine.
    after = jobs(node)
    assert all(j["state"] == "failed" for j in after[: len(after) - before])


def test_the_reported_shapes_through_the_real_clients(engine_node: EngineNode) -> None:
    node = engine_node.node
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0)
    wrong: list[Any] = ["notalist", [1, 2, 3]]
    for messages in wrong:
        with pytest.raises(openai.BadRequestError, match="'messages") as raised:
            client.chat.completions.create(model="ol-model", messages=messages)
        assert raised.value.param in ("messages", "messages[0]")
    with pytest.raises(openai.BadRequestError, match="'temperature' must be a number") as raised:
        client.chat.completions.create(model="ol-model", messages=[USER], temperature="hot")  # type: ignore[list-item, arg-type]
    assert raised.value.param == "temperature"
    # A value OpenAI would refuse but Ollama, whose address this is, passes on reaches the engine.
    answer = client.chat.completions.create(model="ol-model", messages=[USER], temperature=2.5)  # type: ignore[list-item]
    assert answer.choices[0].message.content is not None
    requests_before = engine_node.ollama_engine.stats()["inferences"]
    for messages in ("notalist", [1, 2, 3]):
        response = httpx.post(f"{node.url}/api/chat", json={"model": "oa-model", "messages": messages})
        assert response.status_code == 400 and "'messages" in response.json()["error"]
    with pytest.raises(ollama.ResponseError, match="'options.temperature' must be a number"):
        ollama.Client(host=node.url).generate(model="oa-model", prompt="hi", options={"temperature": "hot"})
    assert engine_node.ollama_engine.stats()["inferences"] == requests_before
    assert all(j["state"] not in ("queued", "running") for j in jobs(node))
