"""Two paired nodes (separate processes): A sponsors a shared rented node, B's callers use it through A.
B polls A's facts only once here, so B still believes the node eligible when A refuses: what B's caller
gets is A's refusal relayed, never "every node failed". Over B's per-peer cap on A: 429 naming the cap;
over the node's daily budget: 403 naming the node and the cap, the very words A's own caller gets.
"""

from __future__ import annotations

from typing import Any

import openai

from app.harness import wait_until
from tests.rented.conftest import TOKEN
from tests.rented.test_two_nodes import FAST, pair, rented_row
from tests.requesters.test_pair_limits import ask, job_on, refused

# B's view of A's facts stays as its first poll found it: the rented node eligible.
STALE = {"PAIRWISE_PEER_POLL_S": "3600"}


def test_a_peers_caller_gets_the_sponsors_403_and_429(node_factory: Any, tls_tiny_factory: Any) -> None:
    rented = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    a = node_factory("A", env=FAST).start()
    b = node_factory("B", env=STALE).start()
    # One answer at this price costs more than any cap below.
    a.cli("rented", "attach", "gpu", "--url", rented.url, "--ca-file", rented.ca_file, "--token-stdin", "--share",
          "--price-per-hour", "360000", stdin=TOKEN)
    a.cli("rented", "set", "gpu", "--peer-usd-per-day", "B=0.01")
    pair(a, b)
    wait_until(lambda: rented_row(b, name="gpu", shared=True, eligible=True), what="B to see A's shared rented node")

    def served() -> Any:
        try:
            return ask(b, "rented-model")
        except openai.APIStatusError:
            return None  # B's first poll of A may not have brought A's models yet

    first = wait_until(served, what="B's first request to be served through A")
    assert first.headers["x-pairwise-off-lan"] == "gpu"
    wait_until(lambda: (job_on(a, first.headers["x-pairwise-job"]) or {}).get("cost_usd"),
               what="the sponsor's cost of B's job")

    # B over its per-peer cap on A: 429 naming the cap, relayed as such.
    over = refused(b, "rented-model", "placeholder")
    assert over.status_code == 429, over.message
    assert "B reached its $0.01/day on gpu" in over.message and "every node" not in over.message

    # The rented node's own daily budget, already spent: A's caller is refused by name (403) ...
    a.cli("rented", "set", "gpu", "--peer-usd-per-day", "B=off", "--budget-usd-per-day", "0.01")

    def refused_on_a() -> openai.APIStatusError | None:
        try:
            ask(a, "rented-model")  # served if the cap is looked at only after this answer's charge
        except openai.APIStatusError as exc:
            return exc
        return None

    on_a = wait_until(refused_on_a, what="A's own caller to be refused at the budget cap")
    assert on_a.status_code == 403 and "gpu: budget reached: $" in on_a.message and "of $0.01 per day" in on_a.message

    # ... and so is B's, through A, while B's facts still say the node is eligible (the relay's answer).
    assert rented_row(b, name="gpu", eligible=True), "B's facts were refreshed; the relayed refusal went untested"
    on_b = refused(b, "rented-model", "placeholder")
    assert on_b.status_code == 403, on_b.message
    assert on_b.message == on_a.message
    assert on_b.response.json()["error"]["type"] == on_a.response.json()["error"]["type"]
    job = job_on(b, on_b.response.headers["x-pairwise-job"])
    assert job is not None and job["state"] == "refused" and "budget reached" in job["error"]
