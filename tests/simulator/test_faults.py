"""Every fault the controls offer, as the client sees it."""

from __future__ import annotations

import time

import httpx
import pytest

from app.simulator import SimulatedHF
from tests.simulator.conftest import endpoint_body, wait_state

REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
CHAT = {"model": REPO, "messages": [{"role": "user", "content": "hi"}]}


async def fault(sim: SimulatedHF, **spec: object) -> None:
    await sim.control("POST", "/_sim/faults", spec)


async def endpoint_url(hf: httpx.AsyncClient, name: str) -> str:
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body(name))
    return str((await wait_state(hf, name, "running"))["status"]["url"])


async def test_429_with_retry_after_then_recovers(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await fault(sim_hf, target="management", kind="429", count=2, retry_after=7)
    for _ in range(2):
        limited = await hf.get("/v2/endpoint/demo-user")
        assert limited.status_code == 429 and limited.headers["Retry-After"] == "7"
        assert limited.headers["RateLimit"] == '"api";r=0;t=7' and "error" in limited.json()
        assert limited.headers["X-Simulated"] == "Hugging Face simulator"
    assert (await hf.get("/v2/endpoint/demo-user")).status_code == 200
    assert await sim_hf.control("GET", "/_sim/faults") == []


async def test_500_and_plain_400(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await fault(sim_hf, target="hub", kind="500")
    broken = await hf.get("/api/whoami-v2")
    assert broken.status_code == 500 and broken.json() == {"error": "Internal Server Error"}
    await fault(sim_hf, target="management", kind="plain_400")
    plain = await hf.post("/v2/endpoint/demo-user", json=endpoint_body("p"))
    assert plain.status_code == 400 and plain.headers["content-type"].startswith("text/plain")
    assert plain.text.startswith("Failed to parse the request body as JSON")
    assert (await hf.get("/api/whoami-v2")).status_code == 200


async def test_slow_answers(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await fault(sim_hf, target="router", kind="slow", delay_s=0.3)
    started = time.monotonic()
    response = await hf.get("/router/v1/models")
    assert response.status_code == 200 and time.monotonic() - started >= 0.3


async def test_timeout_never_answers(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await fault(sim_hf, target="catalog", kind="timeout")
    with pytest.raises(httpx.ReadTimeout):
        await hf.get("/api/catalog/repo-list", timeout=0.3)
    assert (await hf.get("/api/catalog/repo-list")).status_code == 200


async def test_stream_cut_mid_way(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    url = await endpoint_url(hf, "cutter")
    await fault(sim_hf, target="endpoint:demo-user/cutter", kind="cut_stream", cut_after_chunks=2,
                path="/v1/chat/completions")
    assert (await hf.get(f"{url}/health")).status_code == 200  # the path filter spares health
    events: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError):
        async with hf.stream("POST", f"{url}/v1/chat/completions", json={**CHAT, "stream": True}) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line:
                    events.append(line)
    assert len(events) == 2 and "data: [DONE]" not in events
    whole = await hf.post(f"{url}/v1/chat/completions", json=CHAT)
    assert whole.status_code == 200


async def test_json_body_cut(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await fault(sim_hf, target="management", kind="cut_stream")
    with pytest.raises(httpx.RemoteProtocolError):
        await hf.get("/v2/provider/demo-user")
    url = await endpoint_url(hf, "halfway")
    await fault(sim_hf, target="endpoint:demo-user/halfway", kind="cut_stream")
    with pytest.raises(httpx.RemoteProtocolError):
        await hf.post(f"{url}/v1/chat/completions", json=CHAT)


async def test_endpoint_changed_behind_the_back_is_visible_at_its_url(sim_hf: SimulatedHF,
                                                                      hf: httpx.AsyncClient) -> None:
    url = await endpoint_url(hf, "drift")
    assert (await hf.get(f"{url}/v1/models")).json()["data"][0]["id"] == REPO
    await sim_hf.control("POST", "/_sim/endpoints/demo-user/drift/mutate", {"repository": "Qwen/Qwen2.5-0.5B-Instruct"})
    assert (await hf.get(f"{url}/v1/models")).json()["data"][0]["id"] == "Qwen/Qwen2.5-0.5B-Instruct"
    assert (await hf.post(f"{url}/v1/chat/completions", json=CHAT)).status_code == 404
    await sim_hf.control("DELETE", "/_sim/endpoints/demo-user/drift")
    assert (await hf.get(f"{url}/v1/models")).status_code == 404


async def test_fault_validation_and_clear(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    bad = await hf.post("/_sim/faults", json={"target": "nowhere", "kind": "500"})
    assert bad.status_code == 400
    assert (await hf.post("/_sim/faults", json={"target": "hub", "kind": "boom"})).status_code == 400
    await fault(sim_hf, target="hub", kind="500", count=5)
    assert len(await sim_hf.control("DELETE", "/_sim/faults")) == 0
    assert (await hf.get("/api/whoami-v2")).status_code == 200
