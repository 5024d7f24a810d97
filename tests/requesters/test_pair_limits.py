"""Two paired nodes (separate processes): A sponsors a shared rented node and limits what peer B may
spend and how fast it may ask; B's callers use a key of B's. The structured requester is the same on
both nodes; over its daily cap B gets 429 naming the cap (the job refused on both nodes, one notice on
A) while A's own callers and B's LAN-served model still work; over its rate B gets 429 with
Retry-After. The rented node's detail splits today's spend by requester.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from app.harness import NodeProc, wait_until
from tests.rented.conftest import TOKEN
from tests.rented.test_sponsor_e2e import Events
from tests.rented.test_two_nodes import FAST, pair, rented_row

HELLO = [{"role": "user", "content": "hello"}]


def ask(node: NodeProc, model: str, key: str = "placeholder") -> Any:
    client = openai.OpenAI(base_url=node.url + "/v1", api_key=key, max_retries=0)
    return client.chat.completions.with_raw_response.create(model=model, messages=HELLO)  # type: ignore[arg-type]


def refused(node: NodeProc, model: str, key: str) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as caught:
        ask(node, model, key)
    return caught.value


def job_on(node: NodeProc, job_id: str) -> dict[str, Any] | None:
    return next((j for j in node.cli_json("jobs", "--limit", "200") if j["id"] == job_id), None)


def test_per_peer_caps_and_rates_on_the_sponsors_rented_node(node_factory: Any, tls_tiny_factory: Any,
                                                             tiny_factory: Any) -> None:
    rented = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    lan = tiny_factory("--api", "openai", "--model", "b-model")
    a = node_factory("A", env=FAST).start()
    b = node_factory("B", env=FAST).start()
    pair(a, b)
    # A price so high that one answer costs more than B's cap: the cap is reached after one request.
    a.cli("rented", "attach", "gpu", "--url", rented.url, "--ca-file", rented.ca_file, "--token-stdin", "--share",
          "--price-per-hour", "360000", stdin=TOKEN)
    shown = a.cli_json("rented", "set", "gpu", "--peer-usd-per-day", "B=0.01", "--peer-usd-per-day", "*=50")
    assert shown["requesters"]["usd_per_day"] == {"B": 0.01, "*": 50}
    b.cli("engines", "add", "own", "--url", lan.url, "--api", "openai")
    key = b.cli("keys", "create", "laptop-app").stdout.strip()
    wait_until(lambda: rented_row(b, name="gpu", shared=True), what="B to see A's shared rented node")

    def served() -> Any:
        try:
            return ask(b, "rented-model", key)
        except openai.APIStatusError:
            return None  # B's inventory of A may lag a poll behind the facts

    first = wait_until(served, what="B's first request to be served through A")
    assert first.headers["x-pairwise-off-lan"] == "gpu"
    job_id = first.headers["x-pairwise-job"]

    # One structured requester on both nodes: node B (on A from B's pinned certificate), key laptop-app.
    b_id = b.runtime["node_id"]
    for node in (a, b):
        job = wait_until(lambda node=node: (j := job_on(node, job_id)) and j["state"] == "completed" and j,
                         what=f"the job on {node.name}")
        assert job["requester"] == {**job["requester"], "node_id": b_id, "node_name": "B", "key": "laptop-app",
                                    "authenticated": True}
        assert "B · key laptop-app" in node.cli("jobs").stdout
    cost = wait_until(lambda: (job_on(a, job_id) or {}).get("cost_usd"), what="the sponsor's cost of B's job")
    assert cost > 0.01

    # Over its daily cap: 429 in the caller's API shape, naming the cap and when it resets.
    events = Events(a.home)
    over = refused(b, "rented-model", key)
    assert over.status_code == 429
    assert "B reached its $0.01/day on gpu" in over.message and "resets at 00:00 UTC" in over.message
    assert over.response.headers.get("x-should-retry") == "false" and "retry-after" not in over.response.headers
    refused_id = over.response.headers["x-pairwise-job"]
    on_b = job_on(b, refused_id)
    assert on_b is not None and on_b["state"] == "refused" and "$0.01/day on gpu" in on_b["error"]
    on_a = wait_until(lambda: (j := job_on(a, refused_id)) and j["state"] == "refused" and j, what="refused on A")
    assert on_a["requester"]["node_name"] == "B"
    assert refused(b, "rented-model", key).status_code == 429
    notices = wait_until(lambda: [e for e in events.of("requester_limited") if "B reached its $0.01/day on gpu" in e["title"]],
                         what="the sponsor's notice")
    assert len(notices) == 1, "one notice, not one per refusal"
    events.close()

    # The sponsor's own callers still use the rented node; B's LAN-served model still answers B.
    assert ask(a, "rented-model").http_response.status_code == 200
    assert ask(b, "b-model", key).http_response.status_code == 200

    # The rented node's detail on A: today's spend by requester.
    detail = a.cli("rented", "show", "gpu").stdout
    assert "today: " in detail and "B $" in detail and "this machine $" in detail

    # A rate instead of a cap: over it, 429 with Retry-After (through B, in B's caller's shape).
    a.cli("rented", "set", "gpu", "--peer-usd-per-day", "B=off", "--peer-requests-per-min", "*=1")
    assert ask(b, "rented-model", key).http_response.status_code == 200
    fast = refused(b, "rented-model", key)
    assert fast.status_code == 429 and "B is over its 1 requests/min on gpu" in fast.message
    assert 1 <= int(fast.response.headers["retry-after"]) <= 60
    assert ask(a, "rented-model").http_response.status_code == 200, "peer limits never limit the sponsor's callers"
