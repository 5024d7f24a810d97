"""huggingface_hub's own client, unchanged, against the simulator over HTTPS with the generated CA.

Only configuration changes: the Hub and Endpoints base URLs, and huggingface_hub's own client
factory given an SSL context that trusts the simulator CA (verification stays on).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import huggingface_hub
import pytest
from huggingface_hub import HfApi, constants
from huggingface_hub import hf_api as hf_api_module
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import _http as hf_http

from app.simulator import SimSettings, SimulatorThread
from app.simulator.ca import client_ssl_context

FAST = SimSettings(pending_s=0.05, initializing_s=0.15, job_scheduling_s=0.05, minute_s=0.2)
REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorThread]:
    with SimulatorThread(FAST) as thread:
        yield thread


@pytest.fixture
def api(sim: SimulatorThread, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HfApi]:
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # never read a real saved token
    monkeypatch.setenv("HF_TOKEN", sim.demo_token)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_EXPERIMENTAL_WARNING", True)
    # What HF_ENDPOINT=<hub_url> does when set before import: the constant and the module-level
    # HfApi behind huggingface_hub.whoami() (which list_jobs calls) both point at the simulator.
    monkeypatch.setattr(constants, "ENDPOINT", sim.hub_url)
    monkeypatch.setattr(hf_api_module.api, "endpoint", sim.hub_url)
    monkeypatch.setattr(constants, "INFERENCE_ENDPOINTS_ENDPOINT", sim.endpoints_url)
    monkeypatch.setattr(constants, "INFERENCE_CATALOG_ENDPOINT", sim.catalog_v1_url)
    ssl_ctx = client_ssl_context(sim.ca_file)

    def factory() -> httpx2.Client:
        # huggingface_hub's default client, plus our CA as the trust root.
        return httpx2.Client(event_hooks={"request": [hf_http.hf_request_event_hook]}, follow_redirects=True,
                             timeout=None, verify=ssl_ctx)

    huggingface_hub.set_client_factory(factory)
    huggingface_hub.close_session()
    try:
        yield HfApi(endpoint=sim.hub_url, token=sim.demo_token)
    finally:
        huggingface_hub.close_session()
        huggingface_hub.set_client_factory(hf_http.default_client_factory)


def test_endpoint_lifecycle(api: HfApi) -> None:
    assert api.whoami()["name"] == "demo-user"
    hardware = api.list_inference_endpoints_hardware()
    l4 = next(h for h in hardware if h.id == "aws-us-east-1-nvidia-l4-x1")
    assert (l4.price_per_hour, l4.gpu_memory_gb, l4.vendor, l4.region) == (0.8, 24, "aws", "us-east-1")

    endpoint = api.create_inference_endpoint(
        "fidelity", repository=REPO, framework="pytorch", accelerator="gpu", instance_size="x1",
        instance_type="nvidia-l4", region="us-east-1", vendor="aws", min_replica=0, scale_to_zero_timeout=15,
        task="text-generation", tags=["test"])
    assert endpoint.status == "pending" and endpoint.namespace == "demo-user" and endpoint.url is None
    endpoint.wait(timeout=10, refresh_every=0.05)  # type: ignore[arg-type]
    assert endpoint.status == "running" and endpoint.url is not None

    reply = endpoint.client.chat_completion([{"role": "user", "content": "hi"}], model=REPO, max_tokens=4)
    assert reply.choices[0].finish_reason == "length" and reply.choices[0].message.content

    fetched = api.get_inference_endpoint("fidelity")
    assert fetched.repository == REPO and fetched.type == "authenticated"
    assert [e.name for e in api.list_inference_endpoints()] == ["fidelity"]
    assert [e.name for e in api.list_inference_endpoints(namespace="*")] == ["fidelity"]

    assert endpoint.resume(running_ok=True).status == "running"  # 400 "already running" → GET
    with pytest.raises(HfHubHTTPError) as running:
        api.resume_inference_endpoint("fidelity", running_ok=False)
    assert running.value.response.status_code == 400

    assert endpoint.pause().status == "paused"
    assert endpoint.resume(running_ok=True).status == "pending"
    endpoint.wait(timeout=10, refresh_every=0.05)  # type: ignore[arg-type]
    assert endpoint.scale_to_zero().status == "scaledToZero"
    updated = endpoint.update(max_replica=2, repository="Qwen/Qwen2.5-0.5B-Instruct")
    assert updated.repository == "Qwen/Qwen2.5-0.5B-Instruct" and updated.raw["compute"]["scaling"]["maxReplica"] == 2

    with pytest.raises(HfHubHTTPError) as duplicate:
        api.create_inference_endpoint(
            "fidelity", repository=REPO, framework="pytorch", accelerator="gpu", instance_size="x1",
            instance_type="nvidia-l4", region="us-east-1", vendor="aws")
    assert duplicate.value.response.status_code == 409 and "Endpoint name already exists" in str(duplicate.value)

    endpoint.delete()
    assert api.list_inference_endpoints() == []


def test_errors_seen_by_the_client(api: HfApi, sim: SimulatorThread) -> None:
    with pytest.raises(HfHubHTTPError) as bad_compute:
        api.create_inference_endpoint(
            "nope", repository=REPO, framework="pytorch", accelerator="gpu", instance_size="x1",
            instance_type="nvidia-x", region="us-east-1", vendor="aws")
    assert "Instance compute 'Gpu' - 'nvidia-x' - 'x1' in 'aws' - 'us-east-1' not found" in str(bad_compute.value)

    sim.control("POST", "/_sim/faults", {"target": "management", "kind": "429", "retry_after": 3})
    with pytest.raises(HfHubHTTPError) as limited:
        api.list_inference_endpoints()
    assert limited.value.response.status_code == 429 and limited.value.response.headers["Retry-After"] == "3"

    with pytest.raises(HfHubHTTPError) as invalid:
        HfApi(endpoint=sim.hub_url, token="hf_sim_wrong").whoami()
    assert invalid.value.response.status_code == 401


def test_catalog(api: HfApi) -> None:
    catalog = api.list_inference_catalog(task="text-generation")
    smol = next(m for m in catalog if m.repo_id == REPO)
    assert smol.author == "HuggingFaceTB" and {r.engine for r in smol.recipes} == {"vllm", "llamacpp"}
    endpoint = api.create_inference_endpoint_from_catalog(REPO, name="from-catalog", accelerator="gpu")
    assert endpoint.name == "from-catalog" and endpoint.repository == REPO
    endpoint.delete()


def test_jobs(api: HfApi) -> None:
    flavors = api.list_jobs_hardware()
    assert next(f for f in flavors if f.name == "cpu-basic").unit_cost_micro_usd == 167
    job = api.run_job(image="python:3.12", command=["python", "-m", "http.server", "8000"], flavor="cpu-basic",
                      expose=[8000], timeout="1h")
    assert job.status.stage == "SCHEDULING" and job.owner.name == "demo-user"
    assert job.status.expose_urls and job.status.expose_urls[0].endswith(f"/jobs-expose/{job.id}--8000")
    running = api.wait_for_job(job.id, stages=["RUNNING"], poll_interval=0.05, timeout=10)  # type: ignore[list-item]
    assert running.status.stage == "RUNNING"
    assert [j.id for j in api.list_jobs()] == [job.id]
    api.cancel_job(job_id=job.id)
    inspected = api.inspect_job(job_id=job.id)
    assert inspected.status.stage == "CANCELED" and inspected.finished_at is not None


def test_job_labels_and_sse_logs(api: HfApi, sim: SimulatorThread) -> None:
    """What batch windows rely on, read by huggingface_hub itself: labels to find a job again, its logs
    as Server-Sent Events (replayed, then ended with the job), and a cancel that ends the stream."""
    job = api.run_job(image="vllm/vllm-openai", command=["vllm", "serve", REPO], flavor="l4x1", expose=[8000],
                      timeout="1h", labels={"pairwise-sponsor": "n1", "pairwise-rented": "batch"})
    api.wait_for_job(job.id, stages=["RUNNING"], poll_interval=0.05, timeout=10)  # type: ignore[list-item]
    assert [j.id for j in api.list_jobs(labels={"pairwise-rented": "batch"})] == [job.id]
    assert list(api.list_jobs(labels={"pairwise-rented": "other"})) == []
    so_far = list(api.fetch_job_logs(job_id=job.id, follow=False))
    assert f"Loading model {REPO}" in so_far and not any(line.startswith("===== Job started") for line in so_far)
    api.cancel_job(job_id=job.id)
    everything = list(api.fetch_job_logs(job_id=job.id, follow=True))
    assert everything[-1] == "Canceled by user" and "INFO:     Application startup complete." in everything
    assert list(api.fetch_job_logs(job_id=job.id, tail=1)) == ["Canceled by user"]
