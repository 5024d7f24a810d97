"""The plans the tray confirms before billing starts are their TypedDicts (app/services/api/plans.py): the
provider's operations write exactly the keys the types name (no key dropped on the way to the
tray, none missing), for an endpoint, a batch window and the GPUs a window can run on. Against the
simulated Hugging Face, through the facade the wizard uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, get_origin, get_type_hints

from app.services.api.plans import (
    Detached,
    EndpointBudget,
    EndpointPlan,
    WindowBudget,
    WindowFlavor,
    WindowPlan,
)
from app.services.hf.providers import ENDPOINT_OPS, WINDOW_OPS
from app.simulator import SimulatedHF
from tests.ui.conftest import REPO
from tests.ui.helpers import T4, hf_facade, sim_state


def keys_of(row: Mapping[str, object], typed: type) -> None:
    hints = get_type_hints(typed, include_extras=True)
    required = {k for k, hint in hints.items() if get_origin(hint) is not NotRequired}
    assert required <= row.keys(), f"{typed.__name__} lacks {sorted(required - row.keys())}"
    assert row.keys() <= set(hints), f"{typed.__name__} does not name {sorted(row.keys() - set(hints))}"


async def test_an_endpoints_plan_and_a_windows_plan_are_their_types(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await hf_facade(app).login(sim.demo_token)
    params: dict[str, Any] = {"name": "gpu", "model": REPO, **T4, "budget": {"usd_per_day": 5}, "same_as": ["smol"]}
    assert app.node.rented is not None
    endpoints, windows = app.node.rented.providers.get(ENDPOINT_OPS), app.node.rented.providers.get(WINDOW_OPS)
    assert endpoints is not None and windows is not None
    raw = await endpoints.plan(params)  # what the provider's operations write
    keys_of({**raw, "same_as": []}, EndpointPlan)
    plan = await app.facade.rented_plan(params)
    keys_of(plan, EndpointPlan)
    keys_of(plan["budget"], EndpointBudget)
    assert plan["same_as"] == ["smol"] and plan["price_per_hour"] == 0.5 and plan["budget"]["hours_per_day"] == 10

    flavors = await app.facade.window_flavors()
    assert flavors
    for flavor in flavors:
        keys_of(flavor, WindowFlavor)
    [raw_flavor] = [f for f in await windows.flavors() if f["name"] == flavors[0]["name"]]
    keys_of(raw_flavor, WindowFlavor)

    window = {"name": "batch", "model": REPO, "gpu": "l4x1", "window": "1h", "budget": {"usd_per_day": 5}}
    keys_of(await windows.plan(window), WindowPlan)
    planned = await app.facade.window_plan(window)
    keys_of(planned, WindowPlan)
    keys_of(planned["budget"], WindowBudget)
    assert planned["window_minutes"] == 60 and planned["budget"]["usd_per_day"] == 5

    await app.facade.rented_create(params)
    detached = await app.facade.api.rented.detach("gpu")  # it pauses what bills first
    keys_of(detached, Detached)
    assert detached == {"detached": "gpu"} and app.facade.rented_row("gpu") is None
    assert sim_state(sim, "gpu") == "paused"  # nothing left billing that Pairwise no longer watches
