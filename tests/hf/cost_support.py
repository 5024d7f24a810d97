"""Helpers for the cost-fault tests: HF's ledger (the simulator's, never Pairwise's meter) against a cap."""

from __future__ import annotations

from typing import Any

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.hf.support import ledger_row, sim_state

L4_PRICE = 0.8  # aws us-east-1 nvidia-l4 x1, per hour, unless a test changes it
A100_PRICE = 2.5  # aws us-east-1 nvidia-a100 x1


def set_price(sim: SimulatorThread, instance_type: str, price: float | None, size: str = "x1") -> None:
    sim.control("POST", "/_sim/prices", {"instanceType": instance_type, "instanceSize": size, "pricePerHour": price,
                                         "vendor": "aws", "region": "us-east-1"})


def billed(sim: SimulatorThread, name: str = "gpu") -> float:
    return float(ledger_row(sim, name)["usd"])


def wait_billed(sim: SimulatorThread, usd: float, name: str = "gpu", timeout: float = 60.0) -> float:
    return float(wait_until(lambda: billed(sim, name) >= usd and billed(sim, name), timeout=timeout,
                            interval=0.05, what=f"HF's ledger to reach ${usd}"))


def wait_hf_state(sim: SimulatorThread, state: str, name: str = "gpu", timeout: float = 60.0) -> None:
    wait_until(lambda: sim_state(sim, name) == state, timeout=timeout, interval=0.05,
               what=f"{name} to be {state} on HF")


def assert_within_cap(sim: SimulatorThread, cap: float, highest_price: float, name: str = "gpu") -> dict[str, Any]:
    """HF's ledger is at most the cap plus one billed minute at the highest price seen, and has stopped."""
    row = ledger_row(sim, name)
    assert row["stretches"] and row["stretches"][-1]["end"] is not None, f"still billing: {row}"
    bound = cap + highest_price / 60.0
    assert row["usd"] <= bound + 1e-9, f"HF billed ${row['usd']} for a cap of ${cap} (bound ${bound:.4f}): {row}"
    return row
