"""Billing: only initializing and running time, per started simulated minute, at the listed price."""

from __future__ import annotations

import math
from typing import Any

import httpx

from app.simulator import SimulatedHF
from app.simulator.ledger import Meter
from tests.simulator.conftest import endpoint_body, eventually, wait_state

MINUTE_S = 0.2  # conftest FAST


def test_meter_bills_each_started_minute_of_each_period() -> None:
    meter = Meter(0.8)
    meter.open("initializing", 0.0, 0.8)
    meter.open("running", 0.3, 0.8)  # contiguous with initializing: one period
    meter.close(0.5)
    minutes, usd = meter.totals(now=9.0, minute_s=0.2)
    assert minutes == 3 and math.isclose(usd, 3 * 0.8 / 60)
    meter.open("initializing", 1.0, 1.6)  # a later period at a new price
    meter.close(1.05)
    minutes, usd = meter.totals(now=9.0, minute_s=0.2)
    assert minutes == 4 and math.isclose(usd, 3 * 0.8 / 60 + 1.6 / 60)
    exact = Meter(1.0)
    exact.open("running", 0.0, 1.0)
    exact.close(0.4)
    assert exact.totals(now=1.0, minute_s=0.2)[0] == 2  # exactly two minutes is two, not three
    assert Meter(1.0).totals(now=1.0, minute_s=0.2) == (0, 0.0)


def test_each_minute_is_billed_at_the_price_when_it_began() -> None:
    meter = Meter(0.6)
    meter.open("running", 0.0, 0.6)
    meter.open("running", 0.5, 6.0)  # the price rose mid-period: same period, new price from then on
    meter.close(0.9)
    minutes, usd = meter.totals(now=9.0, minute_s=0.2)
    # Minutes start at 0, 0.2, 0.4 (old price), 0.6, 0.8 (new price).
    assert minutes == 5 and math.isclose(usd, 3 * 0.6 / 60 + 2 * 6.0 / 60)


def expected(row: dict[str, Any], now: float, price: float) -> tuple[int, float]:
    """Recompute the bill from the reported stretches, merging contiguous ones."""
    periods: list[list[float]] = []
    for s in row["stretches"]:
        end = now if s["end"] is None else s["end"]
        if periods and abs(periods[-1][1] - s["start"]) < 1e-6:
            periods[-1][1] = end
        else:
            periods.append([s["start"], end])
    minutes = sum(math.ceil(round((e - s) / MINUTE_S, 6)) for s, e in periods)
    return minutes, minutes * price / 60


async def ledger(sim: SimulatedHF) -> dict[str, Any]:
    return await sim.control("GET", "/_sim/ledger")  # type: ignore[no-any-return]


async def test_endpoint_billing_follows_states(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    await sim_hf.control("POST", "/_sim/settings", {"pending_s": 30})  # hold it in pending while we look
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body("billed"))
    assert (await ledger(sim_hf))["endpoints"]["demo-user/billed"]["stretches"] == []  # pending is free
    await sim_hf.control("POST", "/_sim/settings", {"pending_s": 0.05})
    await wait_state(hf, "billed", "running")
    await hf.post("/v2/endpoint/demo-user/billed/pause")
    book = await ledger(sim_hf)
    row = book["endpoints"]["demo-user/billed"]
    assert [s["state"] for s in row["stretches"]] == ["initializing", "running"]
    init = row["stretches"][0]
    assert math.isclose(init["end"] - init["start"], 0.15, abs_tol=1e-6)  # exactly initializing_s
    assert row["price_per_hour"] == 0.8 and row["billed_minutes"] >= 1
    assert (row["billed_minutes"], row["usd"]) == (expected(row, book["now"], 0.8)[0],
                                                   round(expected(row, book["now"], 0.8)[1], 6))

    frozen = row["billed_minutes"]

    async def a_minute_later() -> bool:
        return bool((await ledger(sim_hf))["now"] > book["now"] + 2 * MINUTE_S)

    await eventually(a_minute_later)  # paused: time passes, the bill does not
    assert (await ledger(sim_hf))["endpoints"]["demo-user/billed"]["billed_minutes"] == frozen

    await hf.post("/v2/endpoint/demo-user/billed/resume")
    await wait_state(hf, "billed", "running")
    await hf.delete("/v2/endpoint/demo-user/billed")
    book = await ledger(sim_hf)
    row = book["endpoints"]["demo-user/billed"]  # deleted endpoints keep their row
    assert [s["state"] for s in row["stretches"]] == ["initializing", "running"] * 2
    assert all(s["end"] is not None for s in row["stretches"])
    assert row["billed_minutes"] == expected(row, book["now"], 0.8)[0] > frozen
    assert math.isclose(book["total_usd"], row["usd"], abs_tol=1e-6)


async def test_scaled_to_zero_and_price_changes(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    changed = await sim_hf.control("POST", "/_sim/prices",
                                   {"instanceType": "nvidia-l4", "instanceSize": "x1", "pricePerHour": 1.6})
    assert changed == {"changed": 2}  # aws and gcp rows
    await hf.post("/v2/endpoint/demo-user", json=endpoint_body("pricey"))
    await wait_state(hf, "pricey", "running")
    await hf.post("/v2/endpoint/demo-user/pricey/scale-to-zero")
    book = await ledger(sim_hf)
    row = book["endpoints"]["demo-user/pricey"]
    assert row["price_per_hour"] == 1.6 and row["stretches"][-1]["end"] is not None
    assert row["usd"] == round(row["billed_minutes"] * 1.6 / 60, 6)


async def test_job_billing(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    job = (await hf.post("/api/jobs/demo-user", json={
        "command": ["sleep", "600"], "arguments": [], "environment": {}, "flavor": "t4-small",
        "dockerImage": "python:3.12"})).json()

    async def running() -> bool:
        return bool((await hf.get(f"/api/jobs/demo-user/{job['id']}")).json()["status"]["stage"] == "RUNNING")

    await eventually(running)
    await hf.post(f"/api/jobs/demo-user/{job['id']}/cancel")
    book = await ledger(sim_hf)
    row = book["jobs"][f"demo-user/{job['id']}"]
    assert row["price_per_hour"] == 0.41  # t4-small 0.40 + the $0.01/h job fee
    assert [s["state"] for s in row["stretches"]] == ["RUNNING"]
    minutes, usd = expected(row, book["now"], 0.41)
    assert row["billed_minutes"] == minutes >= 1 and row["usd"] == round(usd, 6)


async def test_router_bills_per_token(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    body = {"model": "meta-llama/Llama-3.1-8B-Instruct:cheapest", "messages": [{"role": "user", "content": "a b c"}]}
    done = (await hf.post("/router/v1/chat/completions", json=body)).json()
    async with hf.stream("POST", "/router/v1/chat/completions", json={**body, "stream": True}) as response:
        lines = [line async for line in response.aiter_lines() if line]
    assert lines[-1] == "data: [DONE]" and not any('"usage"' in line for line in lines)  # not asked for
    router = (await ledger(sim_hf))["router"]
    usage = done["usage"]
    assert router["requests"] == 2
    assert router["prompt_tokens"] == 2 * usage["prompt_tokens"]
    assert router["completion_tokens"] == 2 * usage["completion_tokens"]
    novita = router["by_model"]["meta-llama/Llama-3.1-8B-Instruct:novita"]  # the cheapest provider
    assert math.isclose(novita["usd"], 2 * (usage["prompt_tokens"] * 0.02 + usage["completion_tokens"] * 0.05) / 1e6)
