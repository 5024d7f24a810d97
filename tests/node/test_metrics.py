"""GET /metrics (issue 31): a real node, real openai client traffic, the text parsed by Prometheus' own
parser; the counters move by exactly what was sent, and the control token is required."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.harness import NodeProc, TinyProc


@dataclass
class MetricsNode:
    node: NodeProc
    token: str


@pytest.fixture
def metrics_node(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> Iterator[MetricsNode]:
    tiny = tiny_factory("--api", "openai", "--model", "oa-model", "--reply-tokens", "5")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "oa", "--url", tiny.url, "--api", "openai")
    yield MetricsNode(node, (node.home / "control_token").read_text(encoding="utf-8").strip())


Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(m: MetricsNode) -> tuple[Samples, dict[str, str]]:
    answer = httpx.get(f"{m.node.url}/metrics", headers={"Authorization": f"Bearer {m.token}"}, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: Samples = {}
    kinds: dict[str, str] = {}
    for family in text_string_to_metric_families(answer.text):
        kinds[family.name] = family.type
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples, kinds


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum over every sample of ``name`` whose labels include ``labels`` (0 when none)."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


def test_metrics_count_exactly_the_traffic_sent(metrics_node: MetricsNode) -> None:
    before, kinds = scrape(metrics_node)
    assert kinds["pairwise_requests"] == "counter"
    assert kinds["pairwise_time_to_first_byte_seconds"] == "histogram"
    assert kinds["pairwise_in_flight"] == "gauge"
    assert value(before, "pairwise_requests_total") == 0

    client = openai.OpenAI(base_url=f"{metrics_node.node.url}/v1", api_key="unused", max_retries=0)
    prompt_tokens = completion_tokens = 0
    for _ in range(3):
        reply = client.chat.completions.create(model="oa-model", messages=[{"role": "user", "content": "hi"}])
        assert reply.usage is not None
        prompt_tokens += reply.usage.prompt_tokens
        completion_tokens += reply.usage.completion_tokens
    for _ in range(2):
        usage = None
        for chunk in client.chat.completions.create(model="oa-model", messages=[{"role": "user", "content": "hi"}],
                                                    stream=True, stream_options={"include_usage": True}):
            usage = chunk.usage or usage
        assert usage is not None
        prompt_tokens += usage.prompt_tokens
        completion_tokens += usage.completion_tokens
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "hi"}])

    after, _ = scrape(metrics_node)
    served = {"node": "alpha", "upstream": "oa", "reason": "only_copy"}
    assert value(after, "pairwise_requests_total", **served, state="completed") == 5
    assert value(after, "pairwise_requests_total", upstream="none") == 1  # the unknown model, refused before any upstream
    assert value(after, "pairwise_errors_total", **served) == 0
    assert value(after, "pairwise_tokens_total", upstream="oa", kind="prompt") == prompt_tokens
    assert value(after, "pairwise_tokens_total", upstream="oa", kind="completion") == completion_tokens
    assert value(after, "pairwise_time_to_first_byte_seconds_count", **served) == 5
    assert value(after, "pairwise_time_to_first_byte_seconds_bucket", **served, le="+Inf") == 5
    assert value(after, "pairwise_time_to_first_byte_seconds_sum", **served) > 0
    assert value(after, "pairwise_request_duration_seconds_count", **served) == 5
    # Nothing is in flight once every answer was read; the engine is eligible and has its capacity.
    assert value(after, "pairwise_in_flight", upstream="oa") == 0
    assert value(after, "pairwise_upstream_eligible", upstream="oa") == 1
    assert value(after, "pairwise_capacity", upstream="oa") >= 1


def test_failures_count_per_upstream(metrics_node: MetricsNode, tiny_factory: type[TinyProc]) -> None:
    answers_500 = tiny_factory("--api", "openai", "--model", "m500")
    cuts = tiny_factory("--api", "openai", "--model", "mcut")
    metrics_node.node.cli("engines", "add", "e500", "--url", answers_500.url, "--api", "openai")
    metrics_node.node.cli("engines", "add", "ecut", "--url", cuts.url, "--api", "openai")
    answers_500.config(fail_mode="500")  # after the engines listed their models
    cuts.config(fail_mode="cut")
    client = openai.OpenAI(base_url=f"{metrics_node.node.url}/v1", api_key="unused", max_retries=0)
    for model in ("m500", "mcut"):
        with pytest.raises(openai.APIStatusError):
            client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    after, _ = scrape(metrics_node)
    # ecut answered, then broke mid-answer: the job ran there and failed.
    assert value(after, "pairwise_errors_total", upstream="ecut") == 1
    assert value(after, "pairwise_requests_total", upstream="ecut", state="failed") == 1
    # e500's 500 before any byte is a failover status: an attempt failed there, the job failed unserved.
    assert value(after, "pairwise_upstream_attempts_failed_total", upstream="e500", kind="engine", why="error") == 1
    assert value(after, "pairwise_upstream_attempts_failed_total", upstream="ecut") == 0
    assert value(after, "pairwise_errors_total", upstream="none") == 1
    assert value(after, "pairwise_requests_total", state="failed") == 2


def test_metrics_need_the_control_token(metrics_node: MetricsNode) -> None:
    url = f"{metrics_node.node.url}/metrics"
    assert httpx.get(url, timeout=10).status_code == 401
    wrong = httpx.get(url, headers={"Authorization": "Bearer not-the-token"}, timeout=10)
    assert wrong.status_code == 401 and "control token" in wrong.json()["error"]
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert httpx.get(url, headers={"Authorization": f"Bearer {metrics_node.token}"}, timeout=10).status_code == 200

