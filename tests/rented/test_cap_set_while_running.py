"""A rented node's cap set, raised, lowered or removed while the node runs is the cap of the very next answer.

A node without a cap reads no spend after its answers (``RentedManager.check_budget``); that must never mean a
cap given later goes unseen. One sponsor (a separate process) and a TLS tiny model at $360,000/h ($100 a second:
every answer costs well over the $0.000001 margins below), every change through ``pairwise rented set``.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from app.harness import NodeProc, wait_until
from tests.rented.conftest import TOKEN
from tests.requesters.test_pair_limits import ask, job_on

MARGIN = 0.000001  # less than any answer costs at this price


def served(node: NodeProc) -> str:
    """One whole answer through the node, which must be served; its job id."""
    reply = ask(node, "rented-model")
    assert reply.headers["x-pairwise-off-lan"] == "gpu"
    return str(reply.headers["x-pairwise-job"])


def refused_at_cap(node: NodeProc, period: str) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        ask(node, "rented-model")
    assert caught.value.status_code == 403, caught.value
    assert "gpu: budget reached: $" in caught.value.message and f"per {period}" in caught.value.message, \
        caught.value.message


def spent_today(node: NodeProc, job_id: str) -> float:
    """The node's day spend once ``job_id``'s cost is in it (nothing is in flight between answers)."""
    wait_until(lambda: (job_on(node, job_id) or {}).get("cost_usd"), what=f"the cost of {job_id}")
    return float(node.cli_json("rented", "show", "gpu")["cost"]["day_usd"])


@pytest.mark.parametrize("period", ["day", "month"])
def test_a_cap_given_to_an_uncapped_node_holds_from_the_next_answer(node_factory: type[NodeProc],
                                                                   tls_tiny_factory: Any, period: str) -> None:
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    node = node_factory("A").start()
    node.cli_json("rented", "attach", "gpu", "--url", tiny.url, "--ca-file", tiny.ca_file, "--token-stdin",
                  "--price-per-hour", "360000", stdin=TOKEN)
    flag = f"--budget-usd-per-{period}"

    # No cap: answers go on, whatever they cost.
    served(node)
    last = served(node)
    spent = spent_today(node, last)
    assert spent > 2 * MARGIN

    # A cap just above what was spent: the next answer is served and crosses it, the one after is refused.
    node.cli("rented", "set", "gpu", flag, repr(spent + MARGIN))
    crossing = served(node)
    refused_at_cap(node, period)
    spent = spent_today(node, crossing)

    # Raised: served at once; lowered below the spend: refused at once; removed: served again.
    node.cli("rented", "set", "gpu", flag, repr(spent * 1000))
    last = served(node)
    node.cli("rented", "set", "gpu", flag, "0.01")
    refused_at_cap(node, period)
    node.cli("rented", "set", "gpu", flag, "off")
    last = served(node)

    # Given again after the node ran uncapped once more: it holds from the next answer.
    spent = spent_today(node, last)
    node.cli("rented", "set", "gpu", flag, repr(spent + MARGIN))
    served(node)
    refused_at_cap(node, period)
