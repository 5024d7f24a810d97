"""A workload is charged from when it was sent, not from its first byte: a peer capped at $0.01/day on a
rented node at $3,600/h whose answers take 0.2 s before their first byte (non-streamed) is charged the
0.2 s of its first request (~$0.20, not ~$0.0003) and refused the next one with 429 naming the cap."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from app.harness import wait_until
from tests.rented.conftest import TOKEN
from tests.rented.test_two_nodes import FAST, pair, rented_row
from tests.requesters.test_pair_limits import ask, job_on


def test_a_slow_first_byte_is_charged_to_the_peer_that_sent_it(node_factory: Any, tls_tiny_factory: Any) -> None:
    rented = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model", "--first-byte-delay-s", "0.2")
    a = node_factory("A", env=FAST).start()
    b = node_factory("B", env=FAST).start()
    pair(a, b)
    a.cli("rented", "attach", "gpu", "--url", rented.url, "--ca-file", rented.ca_file, "--token-stdin", "--share",
          "--price-per-hour", "3600", stdin=TOKEN)
    a.cli_json("rented", "set", "gpu", "--peer-usd-per-day", "B=0.01")
    wait_until(lambda: rented_row(b, name="gpu", shared=True), what="B to see A's shared rented node")

    def served() -> Any:
        try:
            return ask(b, "rented-model")
        except openai.APIStatusError:
            return None  # B's inventory of A may lag a poll behind the facts

    first = wait_until(served, what="B's first (non-streamed) request served through A")
    job_id = first.headers["x-pairwise-job"]
    cost = wait_until(lambda: (job_on(a, job_id) or {}).get("cost_usd"), what="the sponsor's cost of B's job")
    assert cost >= 0.2 * 3600 / 3600 * 0.95, cost  # the 0.2 s before the first byte, at $1 per second
    with pytest.raises(openai.APIStatusError) as caught:
        ask(b, "rented-model")
    assert caught.value.status_code == 429, caught.value
    assert "B reached its $0.01/day on gpu" in caught.value.message
