"""HuggingFaceClient against the simulated Hugging Face over HTTPS: every route, and HF misbehaving."""

from __future__ import annotations

import dataclasses

import httpx
import pytest

from app.services.hf.client import HuggingFaceClient
from app.services.hf.errors import HfAuthError, HfError, HfNotFound, HfPermissionError, HfUnavailable
from app.services.hf.models import create_body, pick_hardware
from app.simulator import SimulatedHF
from tests.hf.conftest import QUICK, make_client

REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"


async def fault(sim: SimulatedHF, **body: object) -> None:
    await sim.control("POST", "/_sim/faults", {"target": "management", **body})


async def new_endpoint(hf: HuggingFaceClient, name: str) -> None:
    rows = await hf.hardware("demo-user")
    body = create_body(name=name, repository=REPO, hardware=pick_hardware(rows, instance="nvidia-l4", region=None,
                                                                          vendor=None), engine="vllm")
    await hf.create_endpoint("demo-user", body)


async def test_whoami_is_cached_and_auth_check_answers(sim_hf: SimulatedHF, hf: HuggingFaceClient) -> None:
    first = await hf.whoami()
    assert first["name"] == "demo-user"
    await sim_hf.control("POST", "/_sim/faults", {"target": "hub", "kind": "500", "count": 10, "path": "whoami"})
    assert await hf.whoami() is first  # served from the cache: the fault is never reached
    await sim_hf.control("DELETE", "/_sim/faults")
    assert await hf.auth_check("demo-user", "write") == (True, "")
    await sim_hf.control("POST", "/_sim/tokens", {"token": "hf_sim_call_only", "user": "bob",
                                                  "scoped": {"bob": ["inference.endpoints.infer.write"]}})
    bob = make_client(sim_hf, "hf_sim_call_only")
    try:
        allowed, message = await bob.auth_check("bob", "write")
        assert not allowed and "inference.endpoints.write" in message
        assert (await bob.auth_check("bob", "infer"))[0]
    finally:
        await bob.aclose()


async def test_wrong_token_is_an_auth_error(sim_hf: SimulatedHF) -> None:
    client = make_client(sim_hf, "hf_sim_wrong")
    try:
        with pytest.raises(HfAuthError) as caught:
            await client.whoami()
        assert "Invalid credentials in Authorization header" in caught.value.message
        assert caught.value.hf_status == 401
    finally:
        await client.aclose()


async def test_catalog_v1_with_search(hf: HuggingFaceClient) -> None:
    models = await hf.catalog()
    assert REPO in [m.repo_id for m in models]
    smol = next(m for m in models if m.repo_id == REPO)
    assert {r.engine for r in smol.recipes} == {"vllm", "llamacpp"}
    assert [m.repo_id for m in await hf.catalog("qwen")] == ["Qwen/Qwen2.5-0.5B-Instruct"]


async def test_catalog_falls_back_to_legacy(sim_hf: SimulatedHF, hf: HuggingFaceClient) -> None:
    """A server without the v1 catalog (404) is asked the legacy route; other v1 errors are reported."""
    calls: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if "/v1/" in request.url.path:
            return httpx.Response(404, json={"error": "Not Found"})
        return httpx.Response(200, json={"models": [REPO, "Qwen/Qwen2.5-0.5B-Instruct"]})

    await hf._http.aclose()
    hf._http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    assert [m.repo_id for m in await hf.catalog("smol")] == [REPO]
    assert calls == ["/api/v1/catalog/list", "/api/catalog/repo-list"]
    await hf._http.aclose()
    hf._http = httpx.AsyncClient(transport=httpx.MockTransport(
        lambda r: httpx.Response(400, text="Failed to parse the request body as JSON: bad")))
    with pytest.raises(HfError) as caught:  # a 400 from v1 is an answer, not a missing route
        await hf.catalog()
    assert caught.value.hf_message == "Failed to parse the request body as JSON: bad"


async def test_hardware_rows_mark_unavailable_and_over_quota(hf: HuggingFaceClient) -> None:
    rows = await hf.hardware("demo-user")
    by_id = {r.id: r for r in rows}
    l4 = by_id["aws-us-east-1-nvidia-l4-x1"]
    assert (l4.pricePerHour, l4.gpuMemoryGb, l4.unavailable_reason) == (0.8, 24, None)
    assert l4.quotaFree == l4.quotaMax == 16
    assert (by_id["aws-us-east-1-nvidia-h100-x1"].unavailable_reason or "").startswith("deprecated")
    assert by_id["aws-eu-west-1-nvidia-l40s-x1"].unavailable_reason == "not available"
    assert "over quota: 0 of 0 accelerators free" in (by_id["aws-us-east-1-nvidia-h200-x1"].unavailable_reason or "")
    assert by_id["aws-us-east-1-intel-spr-x1"].gpuMemoryGb is None
    jobs = await hf.jobs_hardware()
    assert any(f["name"] == "l4x1" for f in jobs)


async def test_endpoint_lifecycle_calls(sim_hf: SimulatedHF, hf: HuggingFaceClient) -> None:
    await new_endpoint(hf, "life")
    info = await hf.get_endpoint("demo-user", "life")
    assert (info.type, info.repository, info.gpu, info.min_replica, info.scale_to_zero_timeout) == (
        "authenticated", REPO, "nvidia-l4 x1", 0, 15)
    assert info.engine == "vLLM"
    assert [e.name for e in await hf.list_endpoints("demo-user")] == ["life"]
    paused = await hf.pause("demo-user", "life")
    assert paused.state == "paused"
    resumed = await hf.resume("demo-user", "life")
    assert resumed.state == "pending"
    # Resuming a running endpoint answers 400 "already running"; running_ok reads it instead.
    await sim_hf.control("POST", "/_sim/endpoints/demo-user/life/mutate", {"state": "running"})
    assert (await hf.resume("demo-user", "life")).state == "running"
    with pytest.raises(HfError) as caught:
        await hf.resume("demo-user", "life", running_ok=False)
    assert "already running" in caught.value.hf_message
    assert (await hf.scale_to_zero("demo-user", "life")).state == "scaledToZero"
    updated = await hf.update_endpoint("demo-user", "life", {"compute": {"scaling": {"scaleToZeroTimeout": 30}}})
    assert updated.scale_to_zero_timeout == 30
    await hf.delete_endpoint("demo-user", "life")
    with pytest.raises(HfNotFound) as missing:
        await hf.get_endpoint("demo-user", "life")
    assert "not found" in missing.value.message


async def test_permission_error_names_the_permission(sim_hf: SimulatedHF) -> None:
    await sim_hf.control("POST", "/_sim/tokens", {"token": "hf_sim_call_only2", "user": "demo-user",
                                                  "scoped": {"demo-user": ["inference.endpoints.infer.write"]}})
    client = make_client(sim_hf, "hf_sim_call_only2")
    try:
        with pytest.raises(HfPermissionError) as caught:
            await client.list_endpoints("demo-user")
        assert "inference.endpoints.write" in caught.value.message
    finally:
        await client.aclose()


async def test_429_retry_after_is_honoured(sim_hf: SimulatedHF) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    tuning = dataclasses.replace(QUICK, max_backoff_s=10.0)
    client = HuggingFaceClient(make_client(sim_hf).urls, sim_hf.demo_token, extra_ca=(str(sim_hf.ca_file),),
                               tuning=tuning, sleep=record)
    try:
        await fault(sim_hf, kind="429", count=2, retry_after=3)
        assert await client.list_endpoints("demo-user") == []
        assert waits == [3.0, 3.0]
    finally:
        await client.aclose()


@pytest.mark.parametrize("kind", ["429", "500", "timeout"])
async def test_transient_faults_are_retried(sim_hf: SimulatedHF, hf: HuggingFaceClient, kind: str) -> None:
    await new_endpoint(hf, "flaky")
    await fault(sim_hf, kind=kind, count=2, retry_after=0)
    assert (await hf.pause("demo-user", "flaky")).state == "paused"


@pytest.mark.parametrize("kind,status", [("429", 429), ("500", 500), ("timeout", None)])
async def test_persistent_faults_end_in_a_clear_error(sim_hf: SimulatedHF, hf: HuggingFaceClient, kind: str,
                                                      status: int | None) -> None:
    await fault(sim_hf, kind=kind, count=QUICK.retries + 1, retry_after=0)
    with pytest.raises(HfUnavailable) as caught:
        await hf.list_endpoints("demo-user")
    assert caught.value.message.startswith("listing endpoints of demo-user: Hugging Face ")
    assert f"gave up after {QUICK.retries + 1} attempts" in caught.value.message
    assert caught.value.hf_status == status


async def test_plain_text_error_is_read_and_not_retried(sim_hf: SimulatedHF, hf: HuggingFaceClient) -> None:
    await fault(sim_hf, kind="plain_400", count=1)
    with pytest.raises(HfError) as caught:
        await hf.list_endpoints("demo-user")
    assert caught.value.hf_status == 400
    assert caught.value.hf_message.startswith("Failed to parse the request body as JSON: model.task")
    assert await hf.list_endpoints("demo-user") == []  # the fault was used once: no retry consumed more
