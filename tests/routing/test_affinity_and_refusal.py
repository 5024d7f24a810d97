"""An engine's "too long" refusal moves the request to the next copy, in each engine's words; a
conversation's turns stay on the copy that served its first turn while another copy is idle. Real
node processes, real `openai` and `ollama` clients, tiny engines that enforce a window."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import ollama
import openai
import pytest

from app.harness import wait_until

MODEL = "m"


def last_job(node: Any) -> dict[str, Any]:
    return node.cli_json("jobs", "--limit", "1")[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("style", ["llamacpp", "vllm", "tgi"])
def test_too_long_refusal_moves_to_the_next_copy(style: str, node_factory: Any, tiny_factory: Any) -> None:
    # The first copy enforces a 100-token window it does not publish: only its refusal can tell.
    small = tiny_factory("--api", "openai", "--model", MODEL, "--context-window", "100", "--hide-window",
                         "--too-long-style", style)
    big = tiny_factory("--api", "openai", "--model", MODEL)
    node = node_factory("alpha").start()
    node.cli("engines", "add", "small", "--url", small.url, "--api", "openai")
    node.cli("engines", "add", "big", "--url", big.url, "--api", "openai")
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)
    assert client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=3)
    assert last_job(node)["engine"] == "small"  # a short prompt fits the first copy
    reply = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "word " * 300}],
                                           max_tokens=3)
    assert reply.model == MODEL and big.stats()["inferences"] == 1
    job = last_job(node)
    assert job["engine"] == "big" and "failover: small refused it as too long" in job["route"]


def test_ollama_too_long_refusal_moves_on_and_last_copy_refusal_reaches_caller(node_factory: Any,
                                                                               tiny_factory: Any) -> None:
    small = tiny_factory("--api", "ollama", "--model", "m:latest", "--context-window", "100", "--hide-window",
                         "--too-long-style", "ollama")
    big = tiny_factory("--api", "ollama", "--model", "m:latest", "--context-window", "400", "--hide-window")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "small", "--url", small.url, "--api", "ollama")
    node.cli("engines", "add", "big", "--url", big.url, "--api", "ollama")
    client = ollama.Client(host=node.url)
    assert client.chat(model=MODEL, messages=[{"role": "user", "content": "word " * 300}]).done
    assert last_job(node)["engine"] == "big"
    # Longer than every copy: the last copy's own refusal is the answer (nothing left to try).
    with pytest.raises(ollama.ResponseError, match="exceeds the available context size") as refused:
        client.chat(model=MODEL, messages=[{"role": "user", "content": "word " * 600}])
    assert refused.value.status_code == 400


def engine_in_flight(node: Any, name: str) -> int:
    return next(e["in_flight"] for e in node.cli_json("engines", "list") if e["name"] == name)  # type: ignore[no-any-return]


def test_a_conversation_stays_on_the_copy_of_its_first_turn(node_factory: Any, tiny_factory: Any) -> None:
    first = tiny_factory("--api", "openai", "--model", MODEL)
    second = tiny_factory("--api", "openai", "--model", MODEL)
    node = node_factory("alpha").start()
    node.cli("engines", "add", "first", "--url", first.url, "--api", "openai", "--capacity", "8")
    node.cli("engines", "add", "second", "--url", second.url, "--api", "openai", "--capacity", "8")
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)

    # Hold the first copy busy with another request, so the conversation's first turn goes to the second.
    first.config(first_byte_delay_s=60)

    def hold() -> None:
        try:
            httpx.post(node.url + "/v1/chat/completions", timeout=15, trust_env=False,
                       json={"model": MODEL, "messages": [{"role": "user", "content": "other"}]})
        except httpx.TimeoutException:
            pass  # the caller gives up: the node lets go of the engine

    holder = threading.Thread(target=hold)
    holder.start()
    wait_until(lambda: engine_in_flight(node, "first") == 1, 20, "the first copy to be busy")
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "turn 1"}]
    reply = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=3)  # type: ignore[arg-type]
    assert last_job(node)["engine"] == "second"
    holder.join()
    first.config(first_byte_delay_s=0)
    wait_until(lambda: engine_in_flight(node, "first") == 0, 20, "the first copy to be idle again")

    for turn in range(2, 6):
        messages += [{"role": "assistant", "content": reply.choices[0].message.content or ""},
                     {"role": "user", "content": f"turn {turn}"}]
        raw = client.chat.completions.with_raw_response.create(model=MODEL, messages=messages,  # type: ignore[arg-type]
                                                               max_tokens=3)
        reply = raw.parse()
        job = last_job(node)
        assert job["engine"] == "second", f"turn {turn} went to {job['engine']}"
        assert "affinity" in job["route"] and "affinity" in raw.headers["x-pairwise-route"]
    # Another conversation, with both copies idle, goes where load says: the first copy.
    client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "new"}], max_tokens=3)
    assert last_job(node)["engine"] == "first"
