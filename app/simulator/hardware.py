"""Endpoint hardware: the compute table, prices and per-namespace quota (GET /v2/provider/{ns})."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.simulator import fixtures

UNUSABLE = ("not_available", "deprecated")


class Hardware:
    def __init__(self) -> None:
        self.computes = fixtures.computes()
        self.quota = dict(fixtures.DEFAULT_QUOTA)

    def find(self, vendor: str, region: str, instance_type: str, instance_size: str) -> dict[str, Any] | None:
        for row in self.computes:
            if (row["vendor"], row["region"], row["instanceType"], row["instanceSize"]) == (
                    vendor, region, instance_type, instance_size):
                return row
        return None

    def set_price(self, body: dict[str, Any]) -> int:
        """Apply {"instanceType","instanceSize","pricePerHour"[,"vendor","region"]}; returns rows changed.
        A null price takes the compute out of the price list (HF no longer says what it costs)."""
        price = body.get("pricePerHour")
        if price is not None and (not isinstance(price, int | float) or price < 0):
            raise ValueError("pricePerHour must be a non-negative number or null")
        changed = 0
        for row in self.computes:
            if row["instanceType"] != body.get("instanceType") or row["instanceSize"] != body.get("instanceSize"):
                continue
            if body.get("vendor") not in (None, row["vendor"]) or body.get("region") not in (None, row["region"]):
                continue
            row["pricePerHour"] = None if price is None else float(price)
            changed += 1
        return changed

    def max_accelerators(self, instance_type: str) -> int:
        return self.quota.get(instance_type, 0)

    def provider_json(self, used: Callable[[str], int]) -> dict[str, Any]:
        """The vendor → region → compute tree; `used(instanceType)` counts the namespace's accelerators."""
        vendors: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for row in self.computes:
            compute = {k: v for k, v in row.items() if k not in ("vendor", "region")}
            compute["quota"] = {"maxAccelerators": self.max_accelerators(row["instanceType"]),
                                "usedAccelerators": used(row["instanceType"])}
            vendors.setdefault(row["vendor"], {}).setdefault(row["region"], []).append(compute)
        return {"vendors": [
            {"name": vendor, "status": "available", "regions": [
                {"name": region, "label": fixtures.REGION_LABELS.get(region, region), "status": "available",
                 "computes": computes} for region, computes in regions.items()]}
            for vendor, regions in vendors.items()]}
