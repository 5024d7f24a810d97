"""HF's own scale-to-zero is the backstop for a sponsor that forgets: the sponsor must not defeat it
by calling the endpoint's routes while it sits idle (the simulator counts any call as traffic)."""

from __future__ import annotations

from typing import Any

from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import L4, create, hf_http, wait_show

MINUTE_S = 0.2


def test_an_idle_endpoint_scales_to_zero_while_the_sponsor_watches(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    # The sponsor refreshes its rented nodes often here; with no idle pause of its own, only HF's
    # scale-to-zero (5 sim minutes = 1 s) stops the billing.
    node = start_sponsor(node_factory, sim, MINUTE_S, PAIRWISE_RENTED_REFRESH_S="0.2")
    create(node, "gpu", *L4, "--scale-to-zero-min", "5")
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    row = wait_show(node, "gpu", "HF's scale-to-zero", lambda r: r["provider_state"] == "scaledToZero", timeout=30)
    assert row["state"] == "cold" and row["eligible"]
    with hf_http(sim) as http:
        # One probe, once: the model list and (HF's default engine, TGI, says no context length there) /info.
        assert http.get("/_sim/endpoints/demo-user/gpu/requests").json()["requests"] <= 2
