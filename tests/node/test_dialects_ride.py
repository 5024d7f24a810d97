"""Responses and Anthropic Messages take the way every request takes: failover before the first
byte to an engine of the other API, a job record with the serving engine and the tokens counted,
and a stream cut mid-answer told in the dialect's own terms (the job failed, nothing retried)."""

from __future__ import annotations

import anthropic
import openai
import pytest

from app.harness import NodeProc, TinyProc

pytestmark = pytest.mark.usefixtures("data_path")  # each test on the splice and on aiohttp


@pytest.fixture
def engines(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> tuple[NodeProc, TinyProc, TinyProc]:
    first = tiny_factory("--api", "openai", "--model", "same")
    second = tiny_factory("--api", "ollama", "--model", "same:latest")
    node = node_factory("ride").start()
    # capacity 1 on the first makes the ranking deterministic: the idle first engine is tried first.
    node.cli("engines", "add", "first", "--url", first.url, "--api", "openai", "--capacity", "1")
    node.cli("engines", "add", "second", "--url", second.url, "--api", "ollama", "--capacity", "8")
    return node, first, second


def test_failover_jobs_and_usage(engines: tuple[NodeProc, TinyProc, TinyProc]) -> None:
    node, first, second = engines
    first.config(fail_mode="500")
    oai = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    ant = anthropic.Anthropic(base_url=node.url, api_key="x", max_retries=0)
    reply = oai.responses.create(model="same", input="hello")
    events = list(oai.responses.create(model="same", input="hello", stream=True))
    message = ant.messages.create(model="same", max_tokens=50, messages=[{"role": "user", "content": "hello"}])
    with ant.messages.stream(model="same", max_tokens=50, messages=[{"role": "user", "content": "hi"}]) as s:
        streamed = s.get_final_message()
    assert reply.usage and reply.usage.output_tokens == 12
    assert events[-1].type == "response.completed"
    assert message.usage.output_tokens == 12 and streamed.usage.output_tokens == 12
    jobs = node.cli_json("jobs")
    assert len(jobs) == 4 and {j["engine"] for j in jobs} == {"second"} and {j["state"] for j in jobs} == {"completed"}
    assert all(j["completion_tokens"] == 12 and j["prompt_tokens"] > 0 for j in jobs)
    assert first.stats()["requests"] >= 4  # each was tried there first


def test_a_stream_cut_mid_answer_is_told_in_the_dialect(engines: tuple[NodeProc, TinyProc, TinyProc]) -> None:
    node, first, second = engines
    first.config(fail_mode="cut", cut_after_chunks=3)
    oai = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    before = second.stats()["inferences"]
    events = list(oai.responses.create(model="same", input="hello", stream=True))
    assert events[-1].type == "response.failed" and events[-1].response.error  # type: ignore[union-attr]
    ant = anthropic.Anthropic(base_url=node.url, api_key="x", max_retries=0)
    kinds = []
    with pytest.raises(anthropic.APIStatusError):
        for event in ant.messages.create(model="same", max_tokens=50, stream=True,
                                         messages=[{"role": "user", "content": "hello"}]):
            kinds.append(event.type)
    assert kinds[0] == "message_start" and "message_stop" not in kinds
    assert second.stats()["inferences"] == before  # never retried after the first byte (a model-list refresh may come between)
    assert [j["state"] for j in node.cli_json("jobs")] == ["failed", "failed"]
