"""A sponsor's per-requester spend survives its restart exactly, and only what it charged counts.

Two paired nodes in their own processes against the simulated Hugging Face: sponsor A's endpoint
is shared; peer B and A's own key use it. B also replicates job records a careless or lying peer
could send: a job it says A's rented node served (A never did), its own copy of a job A did serve
with another cost, a job on a rented node of its own that has the same name. A restarts: the spend
by requester (control API and ``rented show``), the key's spend and B's cap are what they were.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai

from app.harness import NodeProc, wait_until
from app.services.node_ids import rented_node_id
from app.simulator import SimulatorThread
from tests.cluster.multinode import pair as pair_nodes
from tests.cluster.multinode import wait_online
from tests.cluster.test_replicated_records import send_as
from tests.hf.conftest import sim_env, start_sponsor
from tests.hf.cost_support import set_price
from tests.hf.support import L4, MESSAGES, REPO, control, create, wait_show

MINUTE_S = 0.5
# $10 a second: a tiny model's answer costs a figure well above the six decimal places spend is kept to.
PRICE_PER_HOUR = 36_000.0


def ask(node: NodeProc, key: str = "placeholder") -> Any:
    client = openai.OpenAI(base_url=node.url + "/v1", api_key=key, max_retries=0)
    return client.chat.completions.with_raw_response.create(model=REPO, messages=MESSAGES)  # type: ignore[arg-type]


def by_requester(node: NodeProc) -> dict[str, float]:
    rows = control(node).call("GET", "/requesters/today", params={"rented": "gpu"})["today"]
    return {r["requester"]: r["usd"] for r in rows}


def cost_of(node: NodeProc, job_id: str) -> float:
    def charged() -> float | None:
        found = next((j for j in node.cli_json("jobs", "--limit", "200") if j["id"] == job_id), None)
        return found.get("cost_usd") if found else None

    return float(wait_until(charged, what=f"the sponsor's cost of job {job_id}"))


def foreign(b: NodeProc, a: NodeProc, **fields: Any) -> dict[str, Any]:
    now = time.time()
    return {"model": REPO, "api": "openai", "origin_node": "B", "origin_node_id": b.runtime["node_id"],
            "requester": {"node_id": b.runtime["node_id"], "node_name": "B", "key": None, "app": "x",
                          "authenticated": False},
            "state": "completed", "created_at": now, "started_at": now, "finished_at": now, "updated_at": now + 5,
            "serving_node": "gpu", "serving_node_id": rented_node_id(a.runtime["node_id"], "gpu"),
            "rented_node": "gpu", "off_lan": True, "cost_usd": 5.0, **fields}


def test_the_sponsors_spend_by_requester_survives_its_restart(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    a = start_sponsor(node_factory, sim, MINUTE_S, name="A", PAIRWISE_PEER_POLL_S="0.3")
    b = node_factory("B", env={**sim_env(sim, MINUTE_S), "PAIRWISE_PEER_POLL_S": "0.3"}).start()
    pair_nodes(a, b)
    set_price(sim, "nvidia-l4", PRICE_PER_HOUR)
    create(a, "gpu", *L4, "--share", "--pause-on-exit", "off")
    wait_show(a, "gpu", "the endpoint to serve", lambda r: r["state"] == "eligible")
    a_key = a.cli("keys", "create", "script").stdout.strip()

    def served_on_b() -> Any:
        try:
            return ask(b)
        except openai.APIStatusError:
            return None  # B's view of A's shared node may lag a poll behind

    b_jobs = [wait_until(served_on_b, what="B served by A's rented node").headers["x-pairwise-job"]]
    b_jobs.append(ask(b).headers["x-pairwise-job"])
    a_jobs = [ask(a, a_key).headers["x-pairwise-job"]]
    b_spent = sum(cost_of(a, j) for j in b_jobs)
    a_spent = sum(cost_of(a, j) for j in a_jobs)
    assert b_spent > 1e-3 and a_spent > 1e-3, (b_spent, a_spent)
    expected = {"B": round(b_spent, 6), "this machine": round(a_spent, 6)}
    wait_until(lambda: by_requester(a) == expected, what=f"A's spend by requester to be {expected}")

    # What B may send but A never charged: none of it moves A's figures, now or after a restart.
    answer = asyncio.run(send_as(b, a, [
        foreign(b, a, id="never-served-by-a"),
        foreign(b, a, id="charged-to-another-node", requester={"node_id": a.runtime["node_id"], "node_name": "A",
                                                               "key": "script", "app": None, "authenticated": True}),
        foreign(b, a, id=b_jobs[0]),  # B's copy of a job A served, with another cost
        foreign(b, a, id="bs-own-gpu", serving_node_id=rented_node_id(b.runtime["node_id"], "gpu")),
        # A clock far ahead (or a lie): first in the store's newest-first order, and finished long ago.
        foreign(b, a, id="from-the-future", created_at=time.time() + 30 * 86400, finished_at=1.0,
                serving_node_id=rented_node_id(b.runtime["node_id"], "gpu")),
    ]))
    assert answer["stored"] + answer["ignored"] == 5
    keys_before = {k["name"]: k["usd_today"] for k in a.cli_json("keys", "list")}
    assert keys_before == {"script": round(a_spent, 6)}
    assert by_requester(a) == expected

    # B's cap: half what it spent refuses it (on A's side, naming the cap) before and after the restart.
    a.cli("rented", "set", "gpu", "--peer-usd-per-day", f"B={b_spent / 2:.9f}")
    try:
        ask(b)
        raise AssertionError("B was served over its cap")
    except openai.APIStatusError as over:
        assert over.status_code == 429 and "B reached its" in over.message

    a.stop()
    a.start()
    wait_online(b, a)
    wait_show(a, "gpu", "the endpoint back after the restart", lambda r: r["state"] == "eligible")
    assert by_requester(a) == expected
    assert {k["name"]: k["usd_today"] for k in a.cli_json("keys", "list")} == keys_before
    detail = a.cli("rented", "show", "gpu").stdout
    assert f"B ${b_spent:.2f}" in detail and f"this machine ${a_spent:.2f}" in detail
    assert cost_of(a, b_jobs[0]) < 5, "A keeps its own record of what it served B, not B's copy"

    def refused_on_b() -> openai.APIStatusError | None:
        try:
            ask(b)
        except openai.APIStatusError as exc:
            return exc if exc.status_code == 429 else None
        raise AssertionError("B was served over its cap after the restart")

    assert "B reached its" in wait_until(refused_on_b, what="B refused by its cap after the restart").message
    # A cap twice what B spent lets B in again: the rebuilt figure is B's real spend, not inflated.
    a.cli("rented", "set", "gpu", "--peer-usd-per-day", f"B={b_spent * 2:.9f}")
    assert ask(b).http_response.status_code == 200
