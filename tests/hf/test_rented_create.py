"""`pairwise rented create|show|pause|resume|delete` and `attach --endpoint` against the simulated HF."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai

from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import (
    L4,
    MESSAGES,
    REPO,
    Events,
    create,
    hf_endpoint,
    hf_http,
    hf_state,
    show,
    wait_show,
)

MINUTE_S = 0.2
SHOW_FIELDS = ("name", "provider", "provider_state", "state", "eligible", "reason", "gpu", "price_per_hour",
               "cost_session_usd", "cost_month_usd", "shared", "policy", "lifecycle", "budget")


def test_create_asks_then_serves(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(pending_s=0.3, initializing_s=0.6, minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    declined = node.cli("rented", "create", "gpu", "--model", REPO, *L4, "--budget-usd-per-day", "10",
                        stdin="n\n", check=False)
    assert declined.returncode == 1 and "not created" in declined.stdout
    assert "price:   $0.80 per hour" in declined.stdout
    assert "$10.00 per day = 12.5 h of this GPU" in declined.stdout
    assert "authenticated (never public)" in declined.stdout
    assert hf_endpoint(sim, "gpu") is None
    out = node.cli("rented", "create", "gpu", "--model", REPO, *L4, "--engine", "vllm", stdin="y\n")
    assert "starting" in out.stdout
    endpoint = hf_endpoint(sim, "gpu")
    assert endpoint is not None and endpoint["type"] == "authenticated"
    scaling = endpoint["compute"]["scaling"]
    assert (scaling["minReplica"], scaling["scaleToZeroTimeout"]) == (0, 15)
    assert "vLLM" in endpoint["model"]["image"]
    # Running, or already scaled to zero by HF (15 simulated minutes are 3 s here): both are eligible.
    row = wait_show(node, "gpu", "the endpoint to run", lambda r: r["state"] in ("eligible", "cold"))
    assert all(key in row for key in SHOW_FIELDS), [k for k in SHOW_FIELDS if k not in row]
    assert (row["provider"], row["gpu"], row["price_per_hour"], row["eligible"]) == (
        "huggingface-endpoint", "nvidia-l4 x1", 0.8, True)
    assert row["provider_state"] in ("running", "scaledToZero")
    assert row["lifecycle"]["managed"] is True and row["lifecycle"]["pause_on_sponsor_exit"] is True
    assert row["cost_session_usd"] > 0  # initializing and running minutes are billed from the start
    cli_row = json.loads(node.cli("rented", "show", "gpu", "--json").stdout)
    assert cli_row["name"] == "gpu" and cli_row["eligible"] is True
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0)
    assert REPO in [m.id for m in client.models.list().data]
    answer = client.chat.completions.with_raw_response.create(model=REPO, messages=MESSAGES)  # type: ignore[arg-type]
    assert answer.headers["x-pairwise-off-lan"] == "gpu"
    assert answer.parse().choices[0].message.content


def test_pause_resume_and_delete_with_confirmation(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["provider_state"] == "running")
    assert "paused on Hugging Face" in node.cli("rented", "pause", "gpu").stdout
    assert hf_state(sim, "gpu") == "paused"
    row = show(node, "gpu")
    assert row["state"] == "paused" and not row["eligible"] and "wake on request is off" in row["reason"]
    node.cli("rented", "resume", "gpu")
    wait_show(node, "gpu", "running again", lambda r: r["state"] == "eligible")
    wrong = node.cli("rented", "delete", "gpu", stdin="yes\n", check=False)
    assert wrong.returncode == 1 and "irreversible" not in wrong.stderr
    assert "cannot be undone" in wrong.stdout and "did not match 'gpu'" in wrong.stderr
    assert hf_endpoint(sim, "gpu") is not None and show(node, "gpu")["name"] == "gpu"
    done = node.cli("rented", "delete", "gpu", stdin="gpu\n")
    assert "deleted endpoint demo-user/gpu" in done.stdout
    assert hf_endpoint(sim, "gpu") is None
    assert node.cli_json("rented", "list") == []
    create(node, "gpu2", *L4)
    node.cli("rented", "delete", "gpu2", "--yes")
    assert hf_endpoint(sim, "gpu2") is None


def make_endpoint(sim: SimulatorThread, name: str, endpoint_type: str) -> None:
    body = {"name": name, "type": endpoint_type,
            "compute": {"accelerator": "gpu", "instanceType": "nvidia-t4", "instanceSize": "x1",
                        "scaling": {"minReplica": 0, "maxReplica": 1, "scaleToZeroTimeout": 600}},
            "model": {"repository": REPO, "framework": "pytorch", "image": {"huggingface": {}},
                      "task": "text-generation"},
            "provider": {"vendor": "aws", "region": "us-east-1"}}
    with hf_http(sim) as http:
        http.post("/v2/endpoint/demo-user", json=body).raise_for_status()


def test_attach_existing_endpoint_and_public_refusal(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    make_endpoint(sim, "open", "public")
    make_endpoint(sim, "mine", "authenticated")
    node = start_sponsor(node_factory, sim, MINUTE_S)
    refused = node.cli("rented", "attach", "open", "--provider", "huggingface-endpoint", "--endpoint",
                       "demo-user/open", "--token-stdin", stdin=sim.demo_token + "\n", check=False)
    assert refused.returncode == 1
    assert "refused to attach endpoint demo-user/open: its type is public, so anyone with its URL could use it" \
        in refused.stderr
    assert node.cli_json("rented", "list") == []
    node.cli("rented", "attach", "mine", "--provider", "huggingface-endpoint", "--endpoint", "demo-user/mine",
             "--managed", "on", "--token-stdin", stdin=sim.demo_token + "\n")
    row = wait_show(node, "mine", "attached endpoint to run", lambda r: r["provider_state"] == "running")
    assert (row["gpu"], row["price_per_hour"], row["models"], row["provider_state"]) == ("nvidia-t4 x1", 0.5, [REPO], "running")
    assert row["url"].startswith(sim.base_url + "/endpoints/")


def test_drift_marks_the_node_ineligible(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["state"] == "eligible")
    sim.control("POST", "/_sim/endpoints/demo-user/gpu/mutate", {"repository": "Qwen/Qwen2.5-0.5B-Instruct"})
    row = wait_show(node, "gpu", "drift noticed", lambda r: r["state"] == "ineligible")
    assert row["reason"] == ("drifted: endpoint demo-user/gpu changed outside Pairwise: model changed from "
                             f"{REPO} to Qwen/Qwen2.5-0.5B-Instruct")
    refused = httpx.post(f"{node.url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES}, timeout=30)
    assert refused.status_code in (403, 404)
    sim.control("POST", "/_sim/endpoints/demo-user/gpu/mutate", {"repository": REPO, "instanceType": "nvidia-t4"})
    row = wait_show(node, "gpu", "hardware drift noticed", lambda r: "hardware changed" in (r["reason"] or ""))
    assert "hardware changed from aws us-east-1 nvidia-l4 x1 to aws us-east-1 nvidia-t4 x1" in row["reason"]
    sim.control("POST", "/_sim/endpoints/demo-user/gpu/mutate", {"instanceType": "nvidia-l4"})
    wait_show(node, "gpu", "drift cleared", lambda r: r["state"] == "eligible")
    sim.control("DELETE", "/_sim/endpoints/demo-user/gpu")
    row = wait_show(node, "gpu", "deletion noticed", lambda r: r["state"] == "ineligible")
    assert row["reason"] == "drifted: endpoint demo-user/gpu was deleted outside Pairwise"


def test_failed_endpoint_is_unhealthy_with_hf_message(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    node = start_sponsor(node_factory, sim, MINUTE_S)
    events = Events(node)
    create(node, "gpu", *L4)
    wait_show(node, "gpu", "running", lambda r: r["state"] == "eligible")
    sim.control("POST", "/_sim/endpoints/demo-user/gpu/mutate",
                {"state": "failed", "message": "CUDA out of memory while loading the model"})
    row = wait_show(node, "gpu", "unhealthy", lambda r: r["state"] == "unhealthy")
    assert (row["provider_state"], row["eligible"]) == ("failed", False)
    assert "CUDA out of memory while loading the model" in row["reason"]
    failed = events.wait("rented_failed")
    assert failed["node"] == "gpu" and failed["message"] == "CUDA out of memory while loading the model"
    events.close()


def test_attach_by_endpoint_uses_the_signed_in_token(sim_factory: Any, node_factory: Any) -> None:
    """No --token-stdin: a Hugging Face endpoint is called with the account's token from the keyring."""
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S)
    make_endpoint(sim, "borrowed", "authenticated")
    node = start_sponsor(node_factory, sim, MINUTE_S)
    node.cli("rented", "attach", "borrowed", "--provider", "huggingface-endpoint", "--endpoint", "demo-user/borrowed")
    wait_show(node, "borrowed", "eligible", lambda r: r["state"] == "eligible")
    reply = httpx.post(f"{node.url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES}, timeout=60)
    assert reply.status_code == 200, reply.text
    assert reply.headers["X-Pairwise-Off-LAN"] == "borrowed"
