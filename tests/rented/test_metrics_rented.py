"""/metrics on a sponsor (issue 31): a rented node's state, budget and spend, and its requests and tokens,
as a real openai client's traffic through a real node moved them."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from app.harness import NodeProc, wait_until
from tests.node.test_metrics import MetricsNode, scrape, value
from tests.rented.conftest import TOKEN


def test_a_rented_nodes_spend_state_and_budget(node_factory: type[NodeProc], tls_tiny_factory: Any) -> None:
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    node = node_factory("A").start()
    node.cli_json("rented", "attach", "gpu", "--url", tiny.url, "--ca-file", tiny.ca_file, "--token-stdin",
                  "--price-per-hour", "0.8", stdin=TOKEN)
    node.cli("rented", "set", "gpu", "--budget-usd-per-day", "5")
    m = MetricsNode(node, (node.home / "control_token").read_text(encoding="utf-8").strip())
    before, _ = scrape(m)
    assert value(before, "pairwise_rented_state", rented_node="gpu", state="eligible") == 1
    assert value(before, "pairwise_rented_state", rented_node="gpu") == 1  # exactly one state is current
    assert value(before, "pairwise_rented_budget_usd", rented_node="gpu", period="day") == 5
    assert value(before, "pairwise_rented_budget_reached", rented_node="gpu") == 0
    assert value(before, "pairwise_rented_spend_usd", rented_node="gpu", period="session") == 0

    client = openai.OpenAI(base_url=node.url + "/v1", api_key="unused", max_retries=0)
    reply = client.chat.completions.create(model="rented-model", messages=[{"role": "user", "content": "hi"}])
    assert reply.usage is not None
    shown = wait_until(lambda: (r := node.cli_json("rented", "show", "gpu"))["cost"]["session_usd"] > 0 and r,
                       what="the rented node's cost")
    after, _ = scrape(m)
    assert value(after, "pairwise_requests_total", upstream="gpu", state="completed") == 1
    assert value(after, "pairwise_tokens_total", upstream="gpu", kind="completion") == reply.usage.completion_tokens
    assert value(after, "pairwise_rented_spend_usd", rented_node="gpu", period="session") == pytest.approx(
        shown["cost"]["session_usd"], rel=0.5)  # the meter accrues between the two reads; same order
    assert value(after, "pairwise_rented_spend_usd", rented_node="gpu", period="session") > 0
    assert value(after, "pairwise_in_flight", upstream="gpu", kind="rented") == 0
