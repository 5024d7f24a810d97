"""Large prompts sent to beta's front door reach alpha's engine whole through alpha's peer relay."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.cluster.multinode import jobs
from tests.cluster.relay_duo import RelayDuo, start_relay_duo
from tests.node.test_request_bodies import SIZES, chat_body, prompt_of
from tests.support.rawhttp import Mode, socket_post, urllib_post


@pytest.fixture(scope="module")
def duo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RelayDuo]:
    yield from start_relay_duo(tmp_path_factory.mktemp("relay-bodies"))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("mode", ["one_write", "pieces", "chunked"])
def test_prompt_crosses_the_relay_whole(duo: RelayDuo, size: str, mode: Mode) -> None:
    prompt = prompt_of(SIZES[size])
    status, answer = socket_post(duo.origin.url, "/api/chat", chat_body("oa-model", prompt), mode)
    assert status == 200, answer
    assert answer["done"] is True
    assert duo.openai_engine.stats()["last_body"]["messages"][0]["content"] == prompt


def test_urllib_prompt_crosses_the_relay_whole(duo: RelayDuo) -> None:
    prompt = prompt_of(SIZES["2MB"])
    status, answer = urllib_post(duo.origin.url, "/v1/chat/completions", chat_body("ol-model", prompt), chunked=True)
    assert status == 200, answer
    assert duo.ollama_engine.stats()["last_body"]["messages"][0]["content"] == prompt


def served_by(node: Any) -> list[dict[str, Any]]:
    """Jobs the node served itself (its list also holds records replicated from its peer)."""
    return [j for j in jobs(node) if j.get("serving_node") == node.name]


def test_wrong_shape_is_400_at_the_origin_and_never_relayed(duo: RelayDuo) -> None:
    served_before = len(served_by(duo.serving))
    client = openai.OpenAI(base_url=f"{duo.origin.url}/v1", api_key="unused", max_retries=0)
    wrong: list[Any] = ["notalist", [1, 2, 3]]
    for messages in wrong:
        with pytest.raises(openai.BadRequestError, match="'messages"):
            client.chat.completions.create(model="oa-model", messages=messages)
    # Never relayed: the serving node served nothing new (the origin's failed records of these two
    # requests may reach it by replication, with no serving node).
    assert len(served_by(duo.serving)) == served_before
    assert all(j["state"] not in ("queued", "running") for j in jobs(duo.origin))
