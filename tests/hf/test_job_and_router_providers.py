"""Slice 1's other Hugging Face shapes, attached as rented nodes through the front door: a Job's
token-protected exposed port (vllm serve behind --expose) and the Inference Providers router."""

from __future__ import annotations

from typing import Any

import openai

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import hf_http

JOB_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
ROUTER_MODEL = "openai/gpt-oss-20b"
JOB_TIMEOUT_S = 10 * 24 * 3600


def served(node: Any, model: str) -> Any:
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0)
    return client.chat.completions.with_raw_response.create(model=model, messages=[{"role": "user", "content": "hi"}])


def test_job_exposed_port_as_a_rented_node(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=0.2)
    with hf_http(sim) as http:
        job = http.post("/api/jobs/demo-user", json={
            # Its timeout must outlast the test on a busy machine: the simulator scales HF seconds to its
            # minute, and 36,000 s (600 min) was 2 real minutes at 0.2 s a minute, after which the job
            # ended in ERROR and its port answered "Job is error". Ten days here are 48 real minutes.
            "flavor": "l4x1", "dockerImage": "vllm/vllm-openai", "timeoutSeconds": JOB_TIMEOUT_S,
            "command": ["vllm", "serve", JOB_MODEL, "--port", "8000"], "expose": {"ports": [8000]},
        }).json()
        url = wait_until(lambda: (http.get(f"/api/jobs/demo-user/{job['id']}").json()["status"]
                                  .get("exposeUrls") or [None])[0], what="the job's exposed URL")
    node = start_sponsor(node_factory, sim, 0.2)
    node.cli("rented", "attach", "batch", "--provider", "huggingface-job", "--url", url, "--token-stdin",
             "--gpu", "l4x1", "--price-per-hour", "0.81", stdin=sim.demo_token + "\n")
    row = wait_until(lambda: (r := node.cli_json("rented", "show", "batch")).get("models") and r,
                     what="the job's model list")
    assert row["models"] == [JOB_MODEL] and row["provider"] == "huggingface-job" and row["warning"] is None
    reply = wait_until(lambda: _ok(served(node, JOB_MODEL)), timeout=30, what="the job to serve")
    assert reply.headers["x-pairwise-off-lan"] == "batch"
    job_row = node.cli_json("jobs")[0]
    assert (job_row["serving_node"], job_row["off_lan"], job_row["rented_node"]) == ("batch", True, "batch")


def test_router_as_a_rented_node(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=0.2)
    node = start_sponsor(node_factory, sim, 0.2)
    node.cli("rented", "attach", "providers", "--provider", "huggingface-router", "--url", sim.sim.router_url,
             "--model", ROUTER_MODEL, "--token-stdin", stdin=sim.demo_token + "\n")
    reply = served(node, ROUTER_MODEL)
    assert reply.http_response.status_code == 200 and reply.headers["x-pairwise-off-lan"] == "providers"
    assert reply.parse().usage.completion_tokens > 0
    refused = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    try:
        refused.chat.completions.create(model="Qwen/Qwen2.5-7B-Instruct", messages=[{"role": "user", "content": "x"}])
        raise AssertionError("a model the declaration does not list must not be reachable through the router")
    except openai.NotFoundError as exc:
        assert "Qwen/Qwen2.5-7B-Instruct" in str(exc)


def _ok(response: Any) -> Any:
    return response if response.http_response.status_code == 200 else None
