"""Batch windows on Hugging Face Jobs (issue 19), against the simulated Hugging Face with a short minute.

A window runs, serves streamed requests from its sponsor and from a paired peer (sharing on), and HF
ends it at its timeout with the ledger equal to the window's preview; the simulator refuses any job
spec with a public port, so passing here shows Pairwise never asks for one.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from app.harness import NodeProc, wait_until
from app.simulator import SimulatorThread
from tests.cluster.multinode import pair
from tests.hf.conftest import sim_env, start_sponsor
from tests.hf.support import wait_show

MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
JOB_SIM = {"refuse_public_ports": True, "job_loading_s": 0.3}


def window_create(node: NodeProc, name: str, *flags: str, window: str) -> dict[str, Any]:
    out = node.cli("rented", "create", name, "--provider", "huggingface-job", "--model", MODEL, "--gpu", "l4x1",
                   "--window", window, *flags, "--yes", "--json")
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def job_ledger(sim: SimulatorThread, row: dict[str, Any]) -> dict[str, Any]:
    return sim.control("GET", "/_sim/ledger")["jobs"][row["window_job"]]  # type: ignore[no-any-return]


def sim_job(sim: SimulatorThread, row: dict[str, Any]) -> dict[str, Any]:
    from tests.hf.support import hf_http

    with hf_http(sim) as http:
        return http.get(f"/api/jobs/{row['window_job']}").json()  # type: ignore[no-any-return]


def streamed(node: NodeProc) -> str:
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0)
    chunks = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True)
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def test_a_window_serves_this_node_and_a_peer_then_hf_ends_it(sim_factory: Any, node_factory: Any) -> None:
    minute = 0.5
    sim: SimulatorThread = sim_factory(minute_s=minute, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, minute, name="A", PAIRWISE_PEER_POLL_S="0.3")
    peer = node_factory("B", env={**sim_env(sim, minute), "PAIRWISE_PEER_POLL_S": "0.3"}).start()
    pair(sponsor, peer)

    plan = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu",
                       "l4x1", "--window", "40m", "--share", stdin="n\n", check=False)
    assert plan.returncode == 1 and "not started" in plan.stdout
    assert "$0.54 for the whole window = 40 min x $0.81/h" in plan.stdout  # (0.80 GPU + 0.01 port) x 40/60
    assert "CANCEL the job" in plan.stdout
    assert sim.control("GET", "/_sim/ledger")["jobs"] == {}  # nothing ran on a "no"

    row = window_create(sponsor, "batch", "--share", window="40m")
    assert row["provider"] == "huggingface-job" and row["window_stage"] in ("SCHEDULING", "RUNNING")
    assert row["window_ends_at"] and row["policy"] == "prefer" and row["state"] == "starting"
    job = sim_job(sim, row)
    assert job["expose"] == {"ports": [8000], "portsPublic": []}
    assert job["labels"]["pairwise-rented"] == "batch" and job["labels"]["pairwise-sponsor"]
    assert job["timeout"] == 40 * 60

    wait_show(sponsor, "batch", "the model to answer", lambda r: r["state"] == "eligible" and r["window_stage"] == "RUNNING")
    assert streamed(sponsor)
    wait_until(lambda: any(n.get("name") == "batch" and n.get("eligible") for n in peer.cli_json("nodes")),
               what="the peer to see the shared window")
    assert streamed(peer)
    jobs = sponsor.cli_json("jobs")
    assert {j["origin_node"] for j in jobs} >= {"A", "B"} and all(j["off_lan"] for j in jobs)

    ended = wait_show(sponsor, "batch", "HF to end the window at its timeout", lambda r: r["state"] == "ended",
                      timeout=30)
    assert ended["window_stage"] == "ERROR" and ended["provider_state"] == "TIMED_OUT"  # HF's word, and what it means
    assert "timed out" in ended["reason"] and "time is up" in ended["reason"] and ended["last_log_lines"] == []
    ledger = job_ledger(sim, row)
    assert abs(ledger["usd"] - row["window_cost_usd"]) <= 0.81 / 60 + 1e-9  # within one minute of the preview
    assert ledger["billed_minutes"] == 40
    charged = wait_show(sponsor, "batch", "the meter to hold the window", lambda r: r["window_charged_usd"] > 0)
    assert abs(charged["cost"]["day_usd"] - ledger["usd"]) <= 0.81 / 60 + 1e-9

    # A window cannot be extended; the refusal says why and what to do instead.
    refused = sponsor.cli("rented", "extend", "batch", "--window", "1h", check=False)
    assert refused.returncode != 0 and "no call to lengthen" in refused.stderr and "new window" in refused.stderr


def test_a_window_the_cap_cannot_pay_for_is_refused(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=0.5, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, 0.5)
    out = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu",
                      "l4x1", "--window", "2h", "--budget-usd-per-day", "1", "--yes", check=False)
    assert out.returncode != 0
    assert "costs $1.62" in out.stderr and "it can pay for 1h 14m" in out.stderr and "--window 74m" in out.stderr
    assert sim.control("GET", "/_sim/ledger")["jobs"] == {}
    missing = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu",
                          "l4x1", "--yes", check=False)
    assert missing.returncode != 0 and "--window is required" in missing.stderr
    endpointish = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu",
                              "l4x1", "--window", "1h", "--region", "us-east-1", "--yes", check=False)
    assert endpointish.returncode != 0 and "--region apply to endpoints only" in endpointish.stderr
    assert sim.control("GET", "/_sim/ledger")["jobs"] == {}


def test_public_ports_are_refused_by_the_test_simulator(sim_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(**JOB_SIM)
    from tests.hf.support import hf_http

    with hf_http(sim) as http:
        refused = http.post("/api/jobs/demo-user", json={
            "flavor": "l4x1", "dockerImage": "vllm/vllm-openai", "expose": {"ports": [8000], "portsPublic": [8000]}})
    assert refused.status_code == 400 and "portsPublic refused" in refused.text
