"""A peer's shared rented copy carries its window in the facts (issue 23), so this node's fit decisions
use it: a prompt its own copy cannot hold goes to the peer's rented copy that can, and one neither holds
is refused here, naming both windows, without asking the sponsor. Two node processes, the simulated
Hugging Face, the real `openai` client. A peer's claim is bounded and covers only its own copy."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from app.harness import wait_until
from app.services.cluster.peer_facts import MAX_WINDOW, shared_node
from tests.cluster.multinode import FAST, api, pair
from tests.hf.conftest import sim_factory, start_sponsor  # noqa: F401  (sim_factory: a fixture)
from tests.hf.support import L4, control, create, wait_show
from tests.routing.conftest import LOCAL_WINDOW, MINUTE_S, REPO

WINDOW = 8192
LONG = [{"role": "user", "content": "hello " * 1800}]  # about 3,100 tokens: over 1024, inside 8192
HUGE = [{"role": "user", "content": "hello " * 5000}]  # about 8,600 tokens: over both


def rented_copy(node: Any) -> dict[str, Any] | None:
    row = next((m for m in api(node, "GET", "/models")["models"] if REPO in m["names"]), None)
    return next((c for c in row["copies"] if c["kind"] == "rented"), None) if row else None


def test_peer_rented_window_decides_fit_here(sim_factory: Any, node_factory: Any,  # noqa: F811
                                              tiny_factory: Any) -> None:
    sim = sim_factory(pending_s=0.1, initializing_s=0.2, minute_s=MINUTE_S)
    sponsor = start_sponsor(node_factory, sim, MINUTE_S, **FAST)
    create(sponsor, "gpu", *L4, "--engine", "vllm", "--context-window", str(WINDOW), "--share", model=REPO)
    wait_show(sponsor, "gpu", "the endpoint to run",
              lambda r: r["provider_state"] == "running" and r["state"] == "eligible" and r.get("url"))
    control(sponsor).call("POST", "/rented/gpu/probe")
    peer = node_factory("beta", env=FAST).start()
    local = tiny_factory("--api", "openai", "--model", REPO, "--context-window", str(LOCAL_WINDOW))
    peer.cli("engines", "add", "local", "--url", local.url, "--api", "openai")
    pair(sponsor, peer)
    wait_until(lambda: (rented_copy(peer) or {}).get("window") == WINDOW, 30, "the peer's rented window here")

    client = openai.OpenAI(base_url=peer.url + "/v1", api_key="x", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model=REPO, messages=LONG, max_tokens=3)
    assert raw.parse().model == REPO and raw.headers["x-pairwise-off-lan"] == "gpu"
    route = raw.headers["x-pairwise-route"]
    assert f"too small: local (window {LOCAL_WINDOW})" in route and f"gpu window {WINDOW}" in route
    assert local.stats()["inferences"] == 0

    endpoint = sim.sim.state.endpoints.all()[0]
    asked = endpoint.requests
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=REPO, messages=HUGE, max_tokens=3)
    assert f"local holds {LOCAL_WINDOW}" in refused.value.message and f"gpu holds {WINDOW}" in refused.value.message
    assert endpoint.requests == asked  # decided here: the rented copy was never asked
    assert peer.cli_json("jobs", "--limit", "1")[0]["serving_node"] is None


def test_a_peers_window_claim_is_bounded_to_its_own_copy() -> None:
    fact = {"id": "n1", "name": "gpu", "models": ["a/b"],
            "windows": {"a/b": 32768, "someone/else": 4096, "x": "big"}}
    cleaned = shared_node(fact, sponsor="alpha", sponsor_id="p1", policy=lambda _i: "when-no-local-node")
    assert cleaned is not None and cleaned["windows"] == {"a/b": 32768}
    for bogus in (0, -5, MAX_WINDOW + 1, True, 1.5, None):
        fact["windows"] = {"a/b": bogus}
        assert shared_node(fact, sponsor="alpha", sponsor_id="p1", policy=lambda _i: "x")["windows"] == {}  # type: ignore[index]
    fact["windows"] = ["a/b"]
    assert shared_node(fact, sponsor="alpha", sponsor_id="p1", policy=lambda _i: "x")["windows"] == {}  # type: ignore[index]
