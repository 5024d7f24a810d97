"""A rented node billed per token (the HF router) is metered and capped: priced from the router's
/v1/models `pricing` (the dearest live provider when none is named), times the usage each answer
reports; at its daily cap it is ineligible (nothing to pause) and a request is refused naming the cap.
The simulated router bills per token too; its tally is what the test compares with."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import show
from tests.hf.test_job_and_router_providers import ROUTER_MODEL

CAP = 0.00003  # about four answers of the tiny replica at groq's $0.1 / $0.5 per 1M tokens


def _router(sim: SimulatorThread) -> dict[str, Any]:
    return sim.control("GET", "/_sim/ledger")["router"]  # type: ignore[no-any-return]


def test_a_per_token_node_is_metered_and_capped(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=0.2)
    node = start_sponsor(node_factory, sim, 0.2)
    node.cli("rented", "attach", "providers", "--provider", "huggingface-router", "--url", sim.sim.router_url,
             "--model", ROUTER_MODEL, "--token-stdin", stdin=sim.demo_token + "\n")
    node.cli("rented", "set", "providers", "--budget-usd-per-day", f"{CAP:.6f}")
    row = show(node, "providers")
    assert row["billed_by"].startswith("per token") and "$0.1 per 1M input and $0.5 per 1M output tokens" \
        in row["billed_by"] and "Hugging Face router" in row["billed_by"], row["billed_by"]
    assert "nothing to pause" in row["cap_note"]
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0)
    served = 0
    with pytest.raises(openai.APIStatusError) as caught:
        for _ in range(50):
            client.chat.completions.create(model=ROUTER_MODEL, messages=[{"role": "user", "content": "hello there"}])
            served += 1
    assert caught.value.status_code == 403 and "budget reached" in caught.value.message, caught.value
    tally = _router(sim)
    assert tally["requests"] == served >= 2
    per_answer = tally["usd"] / served
    assert tally["usd"] <= CAP + per_answer + 1e-12, tally  # the answer that crossed the cap is the overshoot
    row = show(node, "providers")
    assert row["state"] == "ineligible" and "budget reached" in row["reason"]
    # Pairwise counted what the router billed (the same usage, the same prices).
    assert row["cost"]["day_usd"] == pytest.approx(tally["usd"], rel=1e-6), (row["cost"], tally)
