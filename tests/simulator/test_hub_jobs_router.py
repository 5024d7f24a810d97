"""whoami-v2, auth-check, the catalog, Jobs (with exposed ports) and the router."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from app.simulator import SimulatedHF
from app.simulator.ca import client_ssl_context
from tests.simulator.conftest import eventually, sim_client

JOB = {"command": ["vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct", "--port", "8000"], "arguments": [],
       "environment": {}, "flavor": "l4x1", "dockerImage": "vllm/vllm-openai:latest", "timeoutSeconds": 3600,
       "labels": {"name": "vllm-serve"}, "expose": {"ports": [8000]}}


async def test_whoami_shape(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    me = (await hf.get("/api/whoami-v2")).json()
    assert me["type"] == "user" and me["name"] == "demo-user" and [o["name"] for o in me["orgs"]] == ["demo-org"]
    fine = me["auth"]["accessToken"]["fineGrained"]
    assert me["auth"]["accessToken"]["role"] == "fineGrained"
    scoped = {s["entity"]["name"]: s for s in fine["scoped"]}
    assert scoped["demo-user"]["entity"]["type"] == "user" and scoped["demo-org"]["entity"]["type"] == "org"
    assert set(scoped["demo-user"]["permissions"]) == {
        "inference.endpoints.write", "inference.endpoints.infer.write", "inference.serverless.write", "job.write"}
    assert len(scoped["demo-user"]["entity"]["_id"]) == 24
    async with sim_client(sim_hf, token="hf_sim_bogus") as bogus:
        denied = await bogus.get("/api/whoami-v2")
    assert denied.status_code == 401 and denied.headers["X-Error-Message"] == "Invalid credentials in Authorization header"


async def test_auth_check(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    ok = await hf.post("/api/inference-endpoints/demo-org/auth-check/write")
    assert ok.status_code == 200 and ok.json()["namespace"]["name"] == "demo-org"
    assert ok.json()["user"]["name"] == "demo-user"
    assert (await hf.post("/api/jobs/demo-user/auth-check/write")).status_code == 200
    await sim_hf.control("POST", "/_sim/tokens", {"token": "hf_sim_jobs_only", "user": "eve",
                                                  "scoped": {"eve": ["job.write"]}})
    async with sim_client(sim_hf, token="hf_sim_jobs_only") as eve:
        assert (await eve.post("/api/inference-endpoints/eve/auth-check/infer")).status_code == 403
        assert (await eve.post("/api/inference-endpoints/eve/auth-check/read")).status_code == 200
        assert (await eve.post("/api/jobs/eve/auth-check/write")).status_code == 200


async def test_catalog_legacy_and_v1(hf: httpx.AsyncClient) -> None:
    models = (await hf.get("/api/catalog/repo-list")).json()["models"]
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in models
    deployed = (await hf.post("/api/catalog/deploy", json={
        "namespace": "demo-user", "repoId": "HuggingFaceTB/SmolLM2-135M-Instruct", "endpointName": "smol"})).json()
    ep = deployed["endpoint"]
    assert ep["name"] == "smol" and ep["compute"]["scaling"]["scaleToZeroTimeout"] == 15
    assert ep["model"]["repository"] == "HuggingFaceTB/SmolLM2-135M-Instruct"

    items = (await hf.get("/api/v1/catalog/list", params={"engine": "llamacpp"})).json()["items"]
    assert [i["repoId"] for i in items] == ["HuggingFaceTB/SmolLM2-135M-Instruct"]
    recipe = next(r for r in items[0]["recipes"] if r["engineType"] == "llamacpp")
    by_recipe = (await hf.post(f"/api/v1/catalog/recipe/{recipe['publicId']}/deploy",
                               json={"namespace": "demo-user", "config": {"name": "smol-cpu"}})).json()["endpoint"]
    assert by_recipe["compute"]["accelerator"] == "cpu" and "llamacpp" in by_recipe["model"]["image"]
    by_model = await hf.post("/api/v1/catalog/model/Qwen/Qwen2.5-0.5B-Instruct/deploy", json={"namespace": "demo-user"})
    assert by_model.status_code == 200 and by_model.json()["endpoint"]["name"].startswith("qwen2-5-0-5b-instruct-")
    missing = await hf.post("/api/catalog/deploy", json={"namespace": "demo-user", "repoId": "no/such"})
    assert missing.status_code == 404


async def job_stage(hf: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    return (await hf.get(f"/api/jobs/demo-user/{job_id}")).json()  # type: ignore[no-any-return]


async def test_jobs_run_list_inspect_expose_cancel(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    hardware = (await hf.get("/api/jobs/hardware")).json()
    basic = next(h for h in hardware if h["name"] == "cpu-basic")
    assert basic["unitCostMicroUSD"] == 167 and basic["unitLabel"] == "minute" and basic["accelerator"] is None

    await sim_hf.control("POST", "/_sim/settings", {"job_scheduling_s": 30})  # hold it in SCHEDULING
    job = (await hf.post("/api/jobs/demo-user", json=JOB)).json()
    assert job["status"]["stage"] == "SCHEDULING" and job["owner"]["name"] == "demo-user"
    url = job["status"]["exposeUrls"][0]
    assert url == f"{sim_hf.base_url}/jobs-expose/{job['id']}--8000"
    assert (await hf.get(f"{url}/v1/models")).status_code == 503  # still scheduling
    await sim_hf.control("POST", "/_sim/settings", {"job_scheduling_s": 0.05})

    async def running() -> bool:
        return bool((await job_stage(hf, job["id"]))["status"]["stage"] == "RUNNING")

    await eventually(running)
    async with openai.DefaultAsyncHttpxClient(verify=client_ssl_context(sim_hf.ca_file)) as http:
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=sim_hf.demo_token, http_client=http, max_retries=0)
        assert [m.id for m in (await client.models.list()).data] == ["Qwen/Qwen2.5-0.5B-Instruct"]
        reply = await client.chat.completions.create(model="Qwen/Qwen2.5-0.5B-Instruct",
                                                     messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content
        assert (await http.get(f"{url}/v1/models")).status_code == 401  # token-protected

    listed = (await hf.get("/api/jobs/demo-user", params=[("stage", "RUNNING"), ("label", "name=vllm-serve")])).json()
    assert [j["id"] for j in listed] == [job["id"]]
    exposed = (await hf.put(f"/api/jobs/demo-user/{job['id']}/expose",
                            json={"ports": [8000], "portsPublic": [8000]})).json()
    assert exposed["expose"] == {"ports": [8000], "portsPublic": [8000]}
    async with sim_client(sim_hf, token="") as anonymous:
        assert (await anonymous.get(f"{url}/v1/models")).status_code == 200  # public port now

    canceled = (await hf.post(f"/api/jobs/demo-user/{job['id']}/cancel")).json()
    assert canceled["status"]["stage"] == "CANCELED" and canceled["finishedAt"]
    assert (await hf.get(f"{url}/v1/models")).status_code == 404
    assert (await hf.get("/api/jobs/demo-user", params={"stage": "RUNNING"})).json() == []


async def test_job_errors_timeout_and_completion(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    bad = await hf.post("/api/jobs/demo-user", json={**JOB, "flavor": "gpu-huge"})
    assert bad.status_code == 400 and "flavor" in bad.json()["error"]
    both = await hf.post("/api/jobs/demo-user", json={**JOB, "spaceId": "org/space"})
    assert both.status_code == 400
    assert (await hf.get("/api/jobs/demo-user/0123456789abcdef01234567")).status_code == 404

    short = (await hf.post("/api/jobs/demo-user", json={**JOB, "timeoutSeconds": 60})).json()  # 1 sim minute

    async def timed_out() -> bool:
        return bool((await job_stage(hf, short["id"]))["status"]["stage"] == "ERROR")

    await eventually(timed_out)
    assert "timed out" in (await job_stage(hf, short["id"]))["status"]["message"]

    await sim_hf.control("POST", "/_sim/settings", {"job_run_s": 0.05})
    quick = (await hf.post("/api/jobs/demo-user", json={**JOB, "expose": {}})).json()
    assert "exposeUrls" not in quick["status"]

    async def completed() -> bool:
        return bool((await job_stage(hf, quick["id"]))["status"]["stage"] == "COMPLETED")

    await eventually(completed)


async def test_router(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    models = (await hf.get("/router/v1/models")).json()
    llama = next(m for m in models["data"] if m["id"] == "meta-llama/Llama-3.1-8B-Instruct")
    assert {p["provider"] for p in llama["providers"]} == {"together", "novita"}
    assert llama["providers"][0]["pricing"] == {"input": 0.18, "output": 0.18}

    async with openai.DefaultAsyncHttpxClient(verify=client_ssl_context(sim_hf.ca_file)) as http:
        client = openai.AsyncOpenAI(base_url=sim_hf.router_url, api_key=sim_hf.demo_token, http_client=http,
                                    max_retries=0)
        stream = await client.chat.completions.create(
            model="openai/gpt-oss-20b:groq", messages=[{"role": "user", "content": "x"}], stream=True,
            stream_options={"include_usage": True})
        chunks = [c async for c in stream]
        assert chunks[-1].usage is not None
        try:
            await client.chat.completions.create(model="openai/gpt-oss-20b:novita",
                                                 messages=[{"role": "user", "content": "x"}])
            raise AssertionError("an unserved provider must be refused")
        except openai.BadRequestError:
            pass
    await sim_hf.control("POST", "/_sim/tokens", {"token": "hf_sim_no_router", "user": "fay",
                                                  "scoped": {"fay": ["job.write"]}})
    async with sim_client(sim_hf, token="hf_sim_no_router") as fay:
        refused = await fay.post("/router/v1/chat/completions", json={"model": "openai/gpt-oss-20b", "messages": []})
        assert refused.status_code == 403 and "inference.serverless.write" in refused.text
