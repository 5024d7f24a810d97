"""What the service API answers before a rented GPU is created, and after a detach: the plan of an
endpoint (``RentedApi.plan``), the plan of a batch window (``window_plan``), the GPUs a window can
run on (``window_flavors``) and a detach's answer. The provider's operations build plain JSON (it
is also what ``pairwise rented create --dry-run`` prints); these builders give it its type at the
seam, key by key, so a view reads ``plan["budget"]["hours_per_day"]`` where the key is always there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict


class EndpointBudget(TypedDict):
    usd_per_day: float | None
    usd_per_month: float | None
    hours_per_day: float | None  # what the cap allows at the plan's price
    hours_per_month: float | None


class EndpointPlan(TypedDict):
    """What creating an endpoint would do: where, which GPU at which price, what the caps allow."""

    name: str
    namespace: str
    endpoint: str
    model: str
    engine: str
    gpu: str
    accelerator: str | None
    vendor: str | None
    region: str | None
    gpu_memory_gb: float | None
    price_per_hour: float | None
    type: str  # who may call it: "protected" (a token) or "public"
    scale_to_zero_timeout_min: int | None
    context_window: int | None
    budget: EndpointBudget
    same_as: list[str]  # the LAN names the new copy will be linked with
    body: NotRequired[dict[str, object]]  # the creation request itself (the control API leaves it out)


class WindowBudget(TypedDict):
    usd_per_day: float | None
    usd_per_month: float | None
    spent_day_usd: float
    spent_month_usd: float


class WindowPlan(TypedDict):
    """What starting a batch window would do: the whole window's cost against the caps."""

    name: str
    provider: str
    namespace: str
    model: str
    engine: str
    image: str
    gpu: str
    gpu_description: str
    hardware_per_hour: float
    port_fee_per_hour: float
    price_per_hour: float
    window_s: int
    window: str  # "2 h"
    window_minutes: int
    window_cost_usd: float
    budget: WindowBudget
    idle_stop_min: float | None
    use: str
    pause_on_exit: bool
    access: str
    notes: list[str]
    new_window_on_existing_node: bool


class WindowFlavor(TypedDict):
    """A GPU a batch window can run on, with its price and the window's (the port's fee added)."""

    name: str
    pretty: str
    gpu: str | None
    price_per_hour: float
    window_price_per_hour: float


class Detached(TypedDict):
    detached: str


def endpoint_plan(raw: Mapping[str, Any], same_as: list[str]) -> EndpointPlan:
    budget = raw["budget"]
    plan = EndpointPlan(
        name=raw["name"], namespace=raw["namespace"], endpoint=raw["endpoint"], model=raw["model"],
        engine=raw["engine"], gpu=raw["gpu"], accelerator=raw["accelerator"], vendor=raw["vendor"],
        region=raw["region"], gpu_memory_gb=raw["gpu_memory_gb"], price_per_hour=raw["price_per_hour"],
        type=raw["type"], scale_to_zero_timeout_min=raw["scale_to_zero_timeout_min"],
        context_window=raw["context_window"],
        budget=EndpointBudget(usd_per_day=budget["usd_per_day"], usd_per_month=budget["usd_per_month"],
                              hours_per_day=budget["hours_per_day"], hours_per_month=budget["hours_per_month"]),
        same_as=same_as)
    if "body" in raw:
        plan["body"] = raw["body"]
    return plan


def window_plan(raw: Mapping[str, Any]) -> WindowPlan:
    budget = raw["budget"]
    return WindowPlan(
        name=raw["name"], provider=raw["provider"], namespace=raw["namespace"], model=raw["model"],
        engine=raw["engine"], image=raw["image"], gpu=raw["gpu"], gpu_description=raw["gpu_description"],
        hardware_per_hour=raw["hardware_per_hour"], port_fee_per_hour=raw["port_fee_per_hour"],
        price_per_hour=raw["price_per_hour"], window_s=raw["window_s"], window=raw["window"],
        window_minutes=raw["window_minutes"], window_cost_usd=raw["window_cost_usd"],
        budget=WindowBudget(usd_per_day=budget["usd_per_day"], usd_per_month=budget["usd_per_month"],
                            spent_day_usd=budget["spent_day_usd"], spent_month_usd=budget["spent_month_usd"]),
        idle_stop_min=raw["idle_stop_min"], use=raw["use"], pause_on_exit=raw["pause_on_exit"],
        access=raw["access"], notes=list(raw["notes"]),
        new_window_on_existing_node=raw["new_window_on_existing_node"])


def window_flavor(raw: Mapping[str, Any]) -> WindowFlavor:
    return WindowFlavor(name=raw["name"], pretty=raw["pretty"], gpu=raw["gpu"], price_per_hour=raw["price_per_hour"],
                        window_price_per_hour=raw["window_price_per_hour"])
