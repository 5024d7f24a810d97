"""What the service API answers before a rented GPU is created, and after a detach: the plan of an
endpoint (``RentedApi.plan``), the plan of a batch window (``window_plan``), the GPUs a window can
run on (``window_flavors``) and a detach's answer. A provider's operations return them
(rented/operations.py: the seam is typed, key by key), so a view reads ``plan["budget"]["hours_per_day"]``
where the key is always there. Kept below the rooms that name them (a provider's folder, the rented
nodes): types only.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


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
