"""The Inference Endpoints management API as a client sees it: shapes, life cycle, errors, quota, auth."""

from __future__ import annotations

import httpx

from app.simulator import SimulatedHF
from tests.simulator.conftest import endpoint_body, sim_client, wait_state

REQUIRED = ("name", "type", "healthRoute")


async def test_create_get_list_and_lifecycle(hf: httpx.AsyncClient) -> None:
    created = await hf.post("/v2/endpoint/demo-user", json=endpoint_body("e1", tags=["dev"]))
    assert created.status_code == 200
    ep = created.json()
    assert created.headers["X-Simulated"] == "Hugging Face simulator"
    for key in REQUIRED:
        assert key in ep
    for key in ("repository", "framework", "revision", "task"):
        assert key in ep["model"]
    assert ep["status"]["state"] == "pending" and "url" not in ep["status"]
    assert ep["status"]["createdAt"].endswith("Z") and ep["compute"]["id"] == "aws-us-east-1-nvidia-l4-x1"

    running = await wait_state(hf, "e1", "running")
    url = running["status"]["url"]
    assert url.startswith(f"{str(hf.base_url).rstrip('/')}/endpoints/") and len(url.rsplit("/", 1)[1]) == 16
    listed = (await hf.get("/v2/endpoint/demo-user")).json()
    assert [e["name"] for e in listed["items"]] == ["e1"]

    paused = (await hf.post("/v2/endpoint/demo-user/e1/pause")).json()
    assert paused["status"]["state"] == "paused"
    resumed = (await hf.post("/v2/endpoint/demo-user/e1/resume")).json()
    assert resumed["status"]["state"] == "pending"
    await wait_state(hf, "e1", "running")
    again = await hf.post("/v2/endpoint/demo-user/e1/resume")
    assert again.status_code == 400 and "already running" in again.text
    zero = (await hf.post("/v2/endpoint/demo-user/e1/scale-to-zero")).json()
    assert zero["status"]["state"] == "scaledToZero" and zero["status"]["url"] == url

    updated = await hf.put("/v2/endpoint/demo-user/e1", json={"compute": {"scaling": {"maxReplica": 2}},
                                                            "model": {"image": {"vLLM": {"url": "v", "port": 8000}}}})
    body = updated.json()
    assert body["compute"]["scaling"] == {**zero["compute"]["scaling"], "maxReplica": 2}
    assert body["model"]["image"] == {"vLLM": {"url": "v", "port": 8000}}

    assert (await hf.delete("/v2/endpoint/demo-user/e1")).status_code == 200
    missing = await hf.get("/v2/endpoint/demo-user/e1")
    assert missing.status_code == 404 and "error" in missing.json()


async def test_update_running_goes_through_updating(hf: httpx.AsyncClient) -> None:
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body("u1"))
    await wait_state(hf, "u1", "running")
    response = await hf.put("/v2/endpoint/demo-user/u1", json={"model": {"repository": "Qwen/Qwen2.5-0.5B-Instruct"}})
    assert response.json()["status"]["state"] == "updating"
    assert response.json()["model"]["repository"] == "Qwen/Qwen2.5-0.5B-Instruct"
    await wait_state(hf, "u1", "running")


async def test_error_shapes(hf: httpx.AsyncClient) -> None:
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body("dup"))
    duplicate = await hf.post("/v2/endpoint/demo-user", json=endpoint_body("dup"))
    assert duplicate.status_code == 409 and duplicate.json() == {"error": "Endpoint name already exists"}

    bad = await hf.post("/v2/endpoint/demo-user", json=endpoint_body(
        "x", compute={"instanceType": "nvidia-x", "instanceSize": "x1"}))
    assert bad.status_code == 400 and bad.headers["content-type"].startswith("text/plain")
    assert bad.text == "Instance compute 'Gpu' - 'nvidia-x' - 'x1' in 'aws' - 'us-east-1' not found"

    body = endpoint_body("y")
    del body["model"]["repository"]
    missing = await hf.post("/v2/endpoint/demo-user", json=body)
    assert missing.status_code == 400 and "missing field `model.repository`" in missing.text

    garbage = await hf.post("/v2/endpoint/demo-user", content=b"{not json", headers={"Content-Type": "application/json"})
    assert garbage.status_code == 400 and garbage.text.startswith("Failed to parse the request body as JSON")

    deprecated = await hf.post("/v2/endpoint/demo-user", json=endpoint_body(
        "z", compute={"instanceType": "nvidia-h100", "instanceSize": "x1"}))
    assert deprecated.status_code == 400 and "deprecated" in deprecated.json()["error"]

    over = await hf.post("/v2/endpoint/demo-user", json=endpoint_body(
        "h", compute={"instanceType": "nvidia-h200", "instanceSize": "x1"}))
    assert over.status_code == 400 and over.json()["error"].startswith("Quota exceeded")

    for kind in ("public", "protected", "private"):
        assert (await hf.post("/v2/endpoint/demo-user", json=endpoint_body(f"t-{kind}", type=kind))).status_code == 200


async def test_quota_paused_frees_scaled_to_zero_holds(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await sim_hf.control("POST", "/_sim/quota", {"instanceType": "nvidia-l4", "maxAccelerators": 1})
    assert (await hf.post("/v2/endpoint/demo-user", json=endpoint_body("q1"))).status_code == 200
    hardware = (await hf.get("/v2/provider/demo-user")).json()
    l4 = next(c for v in hardware["vendors"] for r in v["regions"] for c in r["computes"]
              if c["id"] == "aws-us-east-1-nvidia-l4-x1")
    assert l4["quota"] == {"maxAccelerators": 1, "usedAccelerators": 1}
    assert (await hf.post("/v2/endpoint/demo-user", json=endpoint_body("q2"))).status_code == 400

    await hf.post("/v2/endpoint/demo-user/q1/scale-to-zero")  # scaled to zero still holds quota
    assert (await hf.post("/v2/endpoint/demo-user", json=endpoint_body("q2"))).status_code == 400
    await hf.post("/v2/endpoint/demo-user/q1/pause")  # paused does not
    assert (await hf.post("/v2/endpoint/demo-user", json=endpoint_body("q2"))).status_code == 200
    blocked = await hf.post("/v2/endpoint/demo-user/q1/resume")
    assert blocked.status_code == 400 and "Quota exceeded" in blocked.json()["error"]


async def test_hardware_listing(hf: httpx.AsyncClient) -> None:
    tree = (await hf.get("/v2/provider/demo-user")).json()
    rows = {c["id"]: c for v in tree["vendors"] for r in v["regions"] for c in r["computes"]}
    assert rows["aws-us-east-1-nvidia-l4-x1"]["pricePerHour"] == 0.8
    assert rows["aws-us-east-1-nvidia-l4-x4"]["pricePerHour"] == 3.8
    assert rows["aws-us-east-1-intel-spr-x1"]["gpuMemoryGb"] is None
    assert {c["status"] for c in rows.values()} >= {"available", "deprecated", "not_available"}
    h200 = rows["aws-us-east-1-nvidia-h200-x1"]
    assert h200["quota"]["maxAccelerators"] - h200["quota"]["usedAccelerators"] < h200["numAccelerators"]
    public = await hf.get("/v2/provider", headers={"Authorization": ""})
    assert public.status_code == 200 and public.json()["vendors"][0]["name"] == "aws"


async def test_auth(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    async with sim_client(sim_hf, token="") as anonymous:
        denied = await anonymous.get("/v2/endpoint/demo-user")
    assert denied.status_code == 401
    assert denied.headers["X-Error-Message"] == "Invalid credentials in Authorization header"
    assert denied.json() == {"error": "Invalid credentials in Authorization header"}

    await sim_hf.control("POST", "/_sim/tokens", {
        "token": "hf_sim_infer_only", "user": "bob", "scoped": {"bob": ["inference.endpoints.infer.write"]}})
    async with sim_client(sim_hf, token="hf_sim_infer_only") as bob:
        forbidden = await bob.post("/v2/endpoint/bob", json=endpoint_body("b1"))
        assert forbidden.status_code == 403
        assert forbidden.json() == {"error": "missing permissions: inference.endpoints.write"}
        assert (await bob.get("/v2/endpoint/demo-org")).status_code == 401

    assert (await hf.get("/v2/endpoint/demo-org")).status_code == 200  # the demo token covers its org
    await sim_hf.control("POST", "/_sim/tokens", {"token": "hf_sim_write_role", "user": "carol", "role": "write"})
    async with sim_client(sim_hf, token="hf_sim_write_role") as carol:
        assert (await carol.get("/v2/endpoint/carol")).status_code == 200
    await sim_hf.control("POST", "/_sim/tokens", {"token": "hf_sim_read_role", "user": "dan", "role": "read"})
    async with sim_client(sim_hf, token="hf_sim_read_role") as dan:
        assert (await dan.get("/v2/endpoint/dan")).status_code == 403


async def test_changed_and_deleted_behind_the_back(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body("m1"))
    await sim_hf.control("POST", "/_sim/endpoints/demo-user/m1/mutate",
                         {"repository": "Qwen/Qwen2.5-0.5B-Instruct", "instanceType": "nvidia-a10g"})
    got = (await hf.get("/v2/endpoint/demo-user/m1")).json()
    assert got["model"]["repository"] == "Qwen/Qwen2.5-0.5B-Instruct"
    assert got["compute"]["instanceType"] == "nvidia-a10g"

    await sim_hf.control("POST", "/_sim/endpoints/demo-user/m1/mutate", {"state": "failed"})
    failed = (await hf.get("/v2/endpoint/demo-user/m1")).json()["status"]
    assert failed["state"] == "failed" and failed["message"] == "Endpoint failed to deploy"
    await sim_hf.control("POST", "/_sim/endpoints/demo-user/m1/mutate",
                         {"state": "updateFailed", "message": "Endpoint failed to update: image pull error"})
    assert (await hf.get("/v2/endpoint/demo-user/m1")).json()["status"]["state"] == "updateFailed"

    await sim_hf.control("DELETE", "/_sim/endpoints/demo-user/m1")
    assert (await hf.get("/v2/endpoint/demo-user/m1")).status_code == 404
