"""The endpoint URLs: OpenAI-compatible serving, HF-style auth, scale-to-zero wake and hold."""

from __future__ import annotations

import time

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from app.simulator import SimulatedHF
from app.simulator.ca import client_ssl_context
from tests.simulator.conftest import endpoint_body, eventually, sim_client, wait_state

REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hello"}]


async def running_endpoint(hf: httpx.AsyncClient, name: str, **overrides: object) -> str:
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body(name, **overrides))
    return str((await wait_state(hf, name, "running"))["status"]["url"])


async def requests_seen(sim: SimulatedHF, name: str) -> dict[str, int]:
    return await sim.control("GET", f"/_sim/endpoints/demo-user/{name}/requests")  # type: ignore[no-any-return]


async def test_openai_client_against_endpoint(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    url = await running_endpoint(hf, "chat")
    async with openai.DefaultAsyncHttpxClient(verify=client_ssl_context(sim_hf.ca_file)) as http:
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=sim_hf.demo_token, http_client=http, max_retries=0)
        assert [m.id for m in (await client.models.list()).data] == [REPO]
        stream = await client.chat.completions.create(model=REPO, messages=MESSAGES, stream=True,
                                                      stream_options={"include_usage": True})
        chunks = [c async for c in stream]
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        done = await client.completions.create(model=REPO, prompt="hi", max_tokens=3)
        assert done.choices[0].finish_reason == "length"
        assert (await http.get(f"{url}/health", headers={"Authorization": f"Bearer {sim_hf.demo_token}"})).status_code == 200
    assert (await requests_seen(sim_hf, "chat")) == {"requests": 3, "health_requests": 1}


async def test_endpoint_auth(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    url = await running_endpoint(hf, "secure")
    public_url = await running_endpoint(hf, "open", type="public")
    await sim_hf.control("POST", "/_sim/tokens", {
        "token": "hf_sim_manage_only", "user": "demo-user", "scoped": {"demo-user": ["inference.endpoints.write"]}})
    async with sim_client(sim_hf, token="") as anonymous:
        missing = await anonymous.get(f"{url}/v1/models")
        assert missing.status_code == 401 and missing.headers["X-Error-Message"]
        assert (await anonymous.get(f"{public_url}/v1/models")).status_code == 200
    async with sim_client(sim_hf, token="hf_sim_manage_only") as manager:
        lacking = await manager.get(f"{url}/v1/models")
        assert lacking.status_code == 403 and "inference.endpoints.infer.write" in lacking.text
    async with sim_client(sim_hf, token="hf_sim_not_registered") as stranger:
        assert (await stranger.get(f"{url}/v1/models")).status_code == 401


async def test_scaled_to_zero_wakes_with_503_then_serves(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    url = await running_endpoint(hf, "sleepy")
    await hf.post("/v2/endpoint/demo-user/sleepy/scale-to-zero")

    health = await hf.get(f"{url}/health")  # health never wakes an endpoint
    assert health.status_code == 503
    assert (await hf.get("/v2/endpoint/demo-user/sleepy")).json()["status"]["state"] == "scaledToZero"
    assert (await requests_seen(sim_hf, "sleepy"))["requests"] == 0

    first = await hf.post(f"{url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES})
    assert first.status_code == 503 and "error" in first.json()
    assert (await hf.get("/v2/endpoint/demo-user/sleepy")).json()["status"]["state"] in ("initializing", "running")
    await wait_state(hf, "sleepy", "running")
    ok = await hf.post(f"{url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES})
    assert ok.status_code == 200 and ok.json()["model"] == REPO


async def test_scale_up_timeout_holds_until_ready(hf: httpx.AsyncClient) -> None:
    url = await running_endpoint(hf, "held")
    await hf.post("/v2/endpoint/demo-user/held/scale-to-zero")
    started = time.monotonic()
    held = await hf.post(f"{url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES},
                         headers={"X-Scale-Up-Timeout": "5"})
    assert held.status_code == 200 and held.json()["choices"][0]["message"]["content"]
    assert time.monotonic() - started >= 0.1  # it really waited for initializing to finish


async def test_scale_up_timeout_expiry(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    url = await running_endpoint(hf, "slow-wake")
    await sim_hf.control("POST", "/_sim/settings", {"initializing_s": 30})
    await hf.post("/v2/endpoint/demo-user/slow-wake/scale-to-zero")
    expired = await hf.post(f"{url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES},
                            headers={"X-Scale-Up-Timeout": "0.2"})
    assert expired.status_code == 503 and expired.json() == {"error": "Scale up timeout"}


async def test_idle_endpoint_scales_to_zero_itself(hf: httpx.AsyncClient) -> None:
    # scaleToZeroTimeout is in HF minutes: 1 minute = minute_s (0.2 s) here.
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body(
        "idle", compute={"scaling": {"minReplica": 0, "maxReplica": 1, "scaleToZeroTimeout": 1}}))
    await wait_state(hf, "idle", "scaledToZero", within=3)
    book = await hf.get("/_sim/ledger")
    assert [s["state"] for s in book.json()["endpoints"]["demo-user/idle"]["stretches"]] == ["initializing", "running"]
    await running_endpoint(hf, "always", compute={"scaling": {"minReplica": 1, "maxReplica": 1}})


async def test_unavailable_states(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    url = await running_endpoint(hf, "gone")
    await hf.post("/v2/endpoint/demo-user/gone/pause")
    paused = await hf.post(f"{url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES},
                           headers={"X-Scale-Up-Timeout": "1"})
    assert paused.status_code == 503 and paused.json() == {"error": "Endpoint is paused"}
    assert (await hf.get("/v2/endpoint/demo-user/gone")).json()["status"]["state"] == "paused"

    unknown = await hf.get(f"{url.rsplit('/', 1)[0]}/aaaaaaaaaaaaaaaa/v1/models")
    assert unknown.status_code == 404 and unknown.json() == {"error": "Endpoint not found"}

    await sim_hf.control("POST", "/_sim/settings", {"initializing_s": 30})
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body("fresh"))
    starting_url = (await wait_state(hf, "fresh", "initializing"))["status"]["url"]
    starting = await hf.post(f"{starting_url}/v1/chat/completions", json={"model": REPO, "messages": MESSAGES})
    assert starting.status_code == 503 and "error" in starting.json()
    await hf.delete("/v2/endpoint/demo-user/gone")
    assert (await hf.get(f"{url}/v1/models")).status_code == 404


async def test_stream_passes_usage_through_only_when_asked(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    url = await running_endpoint(hf, "streamer")
    lines: list[str] = []
    async with hf.stream("POST", f"{url}/v1/chat/completions",
                         json={"model": REPO, "messages": MESSAGES, "stream": True}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line async for line in response.aiter_lines() if line]
    assert lines[-1] == "data: [DONE]" and not any('"usage"' in line for line in lines)

    async def served() -> bool:
        return (await requests_seen(sim_hf, "streamer"))["requests"] == 1

    await eventually(served)


@pytest.mark.parametrize("path", ["/v1/chat/completions"])
async def test_unknown_model_is_the_replicas_404(hf: httpx.AsyncClient, path: str) -> None:
    url = await running_endpoint(hf, "strict")
    response = await hf.post(f"{url}{path}", json={"model": "other/model", "messages": MESSAGES})
    assert response.status_code == 404 and response.json()["error"]["code"] == "model_not_found"
