"""`pairwise hf login|logout|status|catalog|hardware` against a node process and the simulated HF."""

from __future__ import annotations

import json

from app.simulator import SimulatorThread
from tests.hf.conftest import demo_login, sim_env

CALL_ONLY = "hf_sim_call_only_token"
NOTHING = "hf_sim_jobs_only_token"


def test_login_good_token_shows_namespaces(sim_thread: SimulatorThread, node_factory) -> None:  # type: ignore[no-untyped-def]
    node = node_factory("sponsor", env=sim_env(sim_thread, 0.2)).start()
    out = node.cli("hf", "login", "--token-stdin", stdin=sim_thread.demo_token + "\n")
    assert "Signed in to Hugging Face as demo-user" in out.stdout
    lines = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[2:]}
    assert lines == {"demo-user": ["user", "yes", "yes"], "demo-org": ["org", "yes", "yes"]}
    assert out.stderr == ""
    status = node.cli_json("hf", "status")
    assert status["signed_in"] and status["user"] == "demo-user"
    # The token lives in the keyring only: nothing the node wrote holds it.
    for path in node.home.rglob("*"):
        if path.is_file():
            assert sim_thread.demo_token.encode() not in path.read_bytes(), path
    node.cli("hf", "logout")
    assert node.cli_json("hf", "status")["signed_in"] is False
    refused = node.cli("hf", "catalog", check=False)
    assert refused.returncode == 1 and "not signed in to Hugging Face" in refused.stderr


def test_login_token_missing_a_permission(sim_thread: SimulatorThread, node_factory) -> None:  # type: ignore[no-untyped-def]
    sim_thread.control("POST", "/_sim/tokens", {"token": CALL_ONLY, "user": "carol",
                                                "scoped": {"carol": ["inference.endpoints.infer.write"]}})
    sim_thread.control("POST", "/_sim/tokens", {"token": NOTHING, "user": "dave", "scoped": {"dave": ["job.write"]}})
    node = node_factory("sponsor", env=sim_env(sim_thread, 0.2)).start()
    partial = node.cli("hf", "login", "--token-stdin", stdin=CALL_ONLY + "\n")
    assert partial.stdout.splitlines()[2].split() == ["carol", "user", "no", "yes"]
    assert "cannot manage endpoints in carol: it lacks the permission inference.endpoints.write" in partial.stderr
    refused = node.cli("hf", "login", "--token-stdin", stdin=NOTHING + "\n", check=False)
    assert refused.returncode == 1
    assert "inference.endpoints.infer.write" in refused.stderr and "inference.endpoints.write" in refused.stderr
    assert node.cli_json("hf", "status")["user"] == "carol"  # the refused token did not replace the good one


def test_login_wrong_token(sim_thread: SimulatorThread, node_factory) -> None:  # type: ignore[no-untyped-def]
    node = node_factory("sponsor", env=sim_env(sim_thread, 0.2)).start()
    wrong = node.cli("hf", "login", "--token-stdin", stdin="hf_sim_not_a_token\n", check=False)
    assert wrong.returncode == 1
    assert "Hugging Face refused the token: Invalid credentials in Authorization header" in wrong.stderr
    assert "hf_sim_not_a_token" not in wrong.stderr
    assert node.cli_json("hf", "status")["signed_in"] is False


def test_catalog_and_hardware(sim_thread: SimulatorThread, node_factory) -> None:  # type: ignore[no-untyped-def]
    node = node_factory("sponsor", env=sim_env(sim_thread, 0.2)).start()
    demo_login(node, sim_thread)
    models = json.loads(node.cli("hf", "catalog", "--search", "SmolLM2", "--json").stdout)
    assert [m["repo_id"] for m in models] == ["HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-1.7B-Instruct"]
    assert "vllm/gpu" in node.cli("hf", "catalog").stdout
    rows = node.cli_json("hf", "hardware")
    l4 = next(r for r in rows if r["id"] == "aws-us-east-1-nvidia-l4-x1")
    assert (l4["pricePerHour"], l4["gpuMemoryGb"], l4["quotaFree"], l4["unavailable_reason"]) == (0.8, 24, 16, None)
    marked = {r["id"]: r["unavailable_reason"] for r in rows if r["unavailable_reason"]}
    assert marked["aws-eu-west-1-nvidia-l40s-x1"] == "not available"
    assert "over quota" in marked["aws-us-east-1-nvidia-h200-x1"]
    text = node.cli("hf", "hardware").stdout
    assert "nvidia-l4 x1" in text and "$0.8" in text and "not available" in text and "over quota" in text
