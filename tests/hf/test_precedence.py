"""The same model on a local engine and on a rented HF endpoint: default policy → local; overflow with the
local owner busy → rented."""

from __future__ import annotations

import threading
from typing import Any

import httpx

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import L4, MESSAGES, REPO, control, create, wait_show

MINUTE_S = 0.2


def chat(node: Any) -> httpx.Response:
    return httpx.post(f"{node.url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES}, timeout=60)


def test_local_first_then_overflow_to_rented(sim_factory: Any, node_factory: Any, tiny_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    tiny = tiny_factory("--api", "openai", "--model", REPO)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    node.cli("engines", "add", "local", "--url", tiny.url, "--api", "openai", "--capacity", "1")
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["state"] == "eligible")

    default = chat(node)
    assert default.status_code == 200
    assert default.headers["x-pairwise-node"] == "sponsor" and "x-pairwise-off-lan" not in default.headers

    node.cli("rented", "set", "gpu", "--use", "overflow")
    calm = chat(node)
    assert calm.headers["x-pairwise-node"] == "sponsor"  # overflow: local while it has room
    tiny.config(first_byte_delay_s=2.0)
    busy = threading.Thread(target=chat, args=(node,))
    busy.start()
    engines = control(node)
    wait_until(lambda: engines.call("GET", "/engines")["engines"][0]["in_flight"] == 1, what="the local engine busy")
    overflow = chat(node)
    assert overflow.status_code == 200
    assert overflow.headers["x-pairwise-off-lan"] == "gpu" and overflow.headers["x-pairwise-node"] == "gpu"
    busy.join(30)
    jobs = node.cli_json("jobs")
    served = [j["serving_node"] for j in jobs]
    assert served.count("gpu") == 1 and served.count("sponsor") == 3
