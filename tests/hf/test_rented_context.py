"""The context window of a rented endpoint's model (issue 11): HF's default engine (TGI) says none in
/v1/models but says it in GET /info; the probe asks /info once, so /api/show reports it through the
real `ollama` client and routing refuses a request longer than it (num_ctx is only a hint). An endpoint whose
/info fails is served all the same, its window unknown."""

from __future__ import annotations

from typing import Any

import httpx
import ollama
import pytest

from app.simulator import SimulatorThread
from app.simulator.ca import client_ssl_context
from tests.hf.conftest import start_sponsor
from tests.hf.support import L4, MESSAGES, REPO, control, create, wait_show

MINUTE_S = 0.2
WINDOW = 4096  # the simulated replica's max_model_len, which TGI's /info reports as max_total_tokens


def endpoint_get(sim: SimulatorThread, url: str, route: str) -> httpx.Response:
    with httpx.Client(verify=client_ssl_context(sim.ca_file), timeout=10,
                      headers={"Authorization": f"Bearer {sim.demo_token}"}) as http:
        return http.get(url + route)


def rent_running(sim_factory: Any, node_factory: Any, *before_create: dict[str, Any]) -> tuple[Any, Any, dict]:
    sim: SimulatorThread = sim_factory(pending_s=0.1, initializing_s=0.2, minute_s=MINUTE_S)
    for fault in before_create:
        sim.control("POST", "/_sim/faults", fault)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    create(node, "gpu", *L4)  # no --engine: HF's default, TGI
    row = wait_show(node, "gpu", "the endpoint to run",
                    lambda r: r["provider_state"] == "running" and r["state"] == "eligible" and r.get("url"))
    # The probe a running endpoint gets (the refresh loop's first after it runs), asked for now.
    control(node).call("POST", "/rented/gpu/probe")
    return sim, node, row


def test_tgi_endpoint_context_from_info_reaches_api_show(sim_factory: Any, node_factory: Any) -> None:
    sim, node, row = rent_running(sim_factory, node_factory)
    # The simulated endpoint speaks as TGI does: no window in its model list, the window in /info.
    listed = endpoint_get(sim, row["url"], "/v1/models").json()["data"]
    assert [m["id"] for m in listed] == [REPO] and "max_model_len" not in listed[0]
    info = endpoint_get(sim, row["url"], "/info").json()
    assert (info["model_id"], info["max_total_tokens"], info["max_input_tokens"]) == (REPO, WINDOW, WINDOW - 1)

    client = ollama.Client(host=node.url)
    shown = client.show(REPO)
    assert shown.modelinfo is not None and shown.modelinfo["general.context_length"] == WINDOW
    assert shown.capabilities == ["completion"]
    # num_ctx is a window hint: within the window or beyond it, a short request is served (the window is
    # the endpoint's own); a request longer than the window is refused naming it (routing/fit.py).
    reply = client.chat(model=REPO, messages=MESSAGES, options={"num_ctx": 2048, "num_predict": 3})
    assert reply.message.content
    assert client.chat(model=REPO, messages=MESSAGES, options={"num_ctx": WINDOW * 2, "num_predict": 3}).message
    with pytest.raises(ollama.ResponseError, match=f"gpu holds {WINDOW}") as refused:
        client.chat(model=REPO, messages=[{"role": "user", "content": "word " * WINDOW}])
    assert refused.value.status_code == 400


def test_endpoint_whose_info_fails_still_lists_and_serves(sim_factory: Any, node_factory: Any) -> None:
    fault = {"target": "endpoint:demo-user/gpu", "kind": "500", "path": "/info", "count": 1}
    sim, node, row = rent_running(sim_factory, node_factory, fault)
    assert sim.control("GET", "/_sim/faults") == []  # the probe asked /info, and HF's answer was a 500
    row = control(node).call("GET", "/rented/gpu")
    assert (row["state"], row["models"], row["last_error"]) == ("eligible", [REPO], None)
    client = ollama.Client(host=node.url)
    assert REPO in [m.model for m in client.list().models]
    shown = client.show(REPO)
    assert not any(key.endswith(".context_length") for key in shown.modelinfo or {})
    assert client.chat(model=REPO, messages=MESSAGES, options={"num_predict": 3}).message.content
