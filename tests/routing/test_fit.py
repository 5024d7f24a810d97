"""Requests go where they fit (issue 23), through real `openai` and `ollama` clients against a node
process whose model has two copies under two names: a local engine with a 1024-token window and a
rented endpoint (simulated Hugging Face) with a 4096-token one, linked with `pairwise models same`."""

from __future__ import annotations

from typing import Any

import httpx
import ollama
import openai
import pytest

from app.harness import wait_until
from tests.routing.conftest import LOCAL, LOCAL_WINDOW, RENTED_WINDOW, REPO, TwoCopies

SHORT = [{"role": "user", "content": "hello"}]
# About three times the local window by Pairwise's estimate (3.5 bytes a token), well inside the rented one.
LONG = [{"role": "user", "content": "hello " * 1800}]
HUGE = [{"role": "user", "content": "hello " * 3000}]  # more than either window


def last_job(node: Any) -> dict[str, Any]:
    return node.cli_json("jobs", "--limit", "1")[0]  # type: ignore[no-any-return]


def test_models_lists_both_names_and_copies_with_windows(two_copies: TwoCopies) -> None:
    models = two_copies.node.cli_json("models")
    row = next(m for m in models if LOCAL in m["names"])
    assert set(row["names"]) == {LOCAL, REPO}
    copies = {(c["kind"], c["name"]): c["window"] for c in row["copies"]}
    assert copies == {("engine", LOCAL): LOCAL_WINDOW, ("rented", REPO): RENTED_WINDOW}
    text = two_copies.node.cli("models").stdout
    assert f"{LOCAL} = {REPO}" in text and str(LOCAL_WINDOW) in text


def test_short_goes_local_long_goes_rented_under_the_callers_name(two_copies: TwoCopies) -> None:
    client = openai.OpenAI(base_url=two_copies.node.url + "/v1", api_key="x", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model=LOCAL, messages=SHORT, max_tokens=4)
    assert raw.headers["x-pairwise-node"] == "sponsor" and "x-pairwise-off-lan" not in raw.headers
    assert raw.parse().model == LOCAL
    assert f"local window {LOCAL_WINDOW}" in raw.headers["x-pairwise-route"]
    before = two_copies.local.stats()["inferences"]

    chunks = list(client.chat.completions.create(model=LOCAL, messages=LONG, max_tokens=8, stream=True))
    assert {c.model for c in chunks} == {LOCAL}  # streamed back under the name the caller sent
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert two_copies.local.stats()["inferences"] == before  # the local copy was never asked
    job = last_job(two_copies.node)
    assert (job["state"], job["rented_node"], job["model"]) == ("completed", "gpu", LOCAL)
    assert f"too small: local (window {LOCAL_WINDOW})" in job["route"]
    assert f"gpu window {RENTED_WINDOW}" in job["route"] and "policy: when-no-local-node" in job["route"]

    # The rented copy's own name reaches the local copy for a short prompt (local first, by policy).
    reply = client.chat.completions.create(model=REPO, messages=SHORT, max_tokens=4)
    assert reply.model == REPO and last_job(two_copies.node)["serving_node"] == "sponsor"
    assert last_job(two_copies.node)["rented_node"] is None


def test_ollama_client_long_prompt_streams_from_rented(two_copies: TwoCopies) -> None:
    client = ollama.Client(host=two_copies.node.url)
    parts = list(client.chat(model=LOCAL, messages=LONG, stream=True, options={"num_predict": 5}))
    assert {p.model for p in parts} == {LOCAL} and parts[-1].done
    assert last_job(two_copies.node)["rented_node"] == "gpu"


def test_no_copy_holds_it_refused_naming_both_windows(two_copies: TwoCopies) -> None:
    client = openai.OpenAI(base_url=two_copies.node.url + "/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=LOCAL, messages=HUGE)
    text = str(refused.value)
    assert f"local holds {LOCAL_WINDOW}" in text and f"gpu holds {RENTED_WINDOW}" in text and LOCAL in text
    with pytest.raises(ollama.ResponseError, match=f"gpu holds {RENTED_WINDOW}") as shaped:
        ollama.Client(host=two_copies.node.url).chat(model=LOCAL, messages=HUGE)
    assert shaped.value.status_code == 400


def test_local_down_short_goes_rented_and_rented_paused_local_serves(two_copies: TwoCopies) -> None:
    node = two_copies.node
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)
    two_copies.local.config(fail_mode="refuse")
    client.chat.completions.create(model=LOCAL, messages=SHORT, max_tokens=4)
    job = last_job(node)
    assert job["rented_node"] == "gpu" and "failover: " in job["route"]
    two_copies.local.config(fail_mode=None)

    node.cli("rented", "set", "gpu", "--wake-on-request", "off")
    node.cli("rented", "pause", "gpu")
    wait_until(lambda: node.cli_json("rented", "show", "gpu")["state"] == "paused", 20, "the rented copy to pause")
    reply = client.chat.completions.create(model=REPO, messages=SHORT, max_tokens=4)
    assert reply.model == REPO and last_job(node)["rented_node"] is None
    # A long prompt now has no copy that can take it: the local one is too small, the rented one paused.
    with pytest.raises(openai.BadRequestError, match=f"local holds {LOCAL_WINDOW}.*paused"):
        client.chat.completions.create(model=LOCAL, messages=LONG)


def test_num_ctx_is_a_hint(two_copies: TwoCopies) -> None:
    client = ollama.Client(host=two_copies.node.url)
    for num_ctx in (512, 3900, 32768):  # below, near and beyond the local window: served, never refused
        reply = client.chat(model=LOCAL, messages=SHORT, options={"num_ctx": num_ctx, "num_predict": 3})
        assert reply.done and last_job(two_copies.node)["rented_node"] is None
    assert "num_ctx" not in httpx.get(two_copies.local.url + "/_tiny/stats").json()["last_body"]
