"""The service API's rows carry what a view needs, as the node's provider says: whether a rented node
bills, and what can be done about it now."""

from __future__ import annotations

from typing import Any, cast

import pytest

from app.services.api.rented import with_actions
from app.services.api.rows import RentedRow
from app.services.hf.providers import EndpointProvider, JobProvider
from app.services.rented.provider import PlainProvider, Provider

MANAGED = {"lifecycle": {"managed": True}, "price_per_hour": 0.8, "endpoint": "ns/ep", "provider_message": None}
NOT_HF = {"lifecycle": {"managed": False}, "provider_state": None, "endpoint": None}
ENDPOINT = EndpointProvider(cast("Any", None))  # its actions are never called here
PLAIN = PlainProvider()


@pytest.mark.parametrize(("provider", "row", "billing", "pausable", "resumable"), [
    (ENDPOINT, {**MANAGED, "provider_state": "running", "state": "eligible"}, True, True, False),
    (ENDPOINT, {**MANAGED, "provider_state": "initializing", "state": "starting"}, True, True, False),
    (ENDPOINT, {**MANAGED, "provider_state": "scaledToZero", "state": "cold"}, False, True, False),
    (ENDPOINT, {**MANAGED, "provider_state": "paused", "state": "paused"}, False, False, True),
    (ENDPOINT, {**MANAGED, "provider_state": "failed", "state": "unhealthy"}, False, False, True),
    (ENDPOINT, {**MANAGED, "lifecycle": {"managed": False}, "provider_state": "running", "state": "eligible"},
     True, False, False),
    # An endpoint nothing reports a state for (as local_row writes it): an eligible node with a price is
    # taken to bill; nothing to pause.
    (PLAIN, {**NOT_HF, "state": "eligible", "price_per_hour": 1.2}, True, False, False),
    (PLAIN, {**NOT_HF, "state": "eligible", "price_per_hour": None}, False, False, False),
    (PLAIN, {**NOT_HF, "state": "ineligible", "price_per_hour": 1.2}, False, False, False),
])
def test_rented_rows_say_billing_pausable_resumable(provider: Provider, row: dict[str, Any], billing: bool,
                                                     pausable: bool, resumable: bool) -> None:
    out = with_actions(cast("RentedRow", row), provider)
    assert (out["billing"], out["pausable"], out["resumable"]) == (billing, pausable, resumable)
    assert {k: out[k] for k in row} == row  # the row itself is unchanged
    assert set(out["actions"]) <= set(out["capabilities"]) == {a.value for a in provider.capabilities}


def test_a_window_is_stopped_never_paused_and_its_end_stops_billing() -> None:
    window = JobProvider(cast("Any", None))
    row = {"lifecycle": {"managed": True}, "provider_state": "RUNNING", "provider_message": None, "state": "eligible",
           "price_per_hour": 1.0, "window_job": "ns/1"}
    running = with_actions(cast("RentedRow", {**row, "window_stage": "RUNNING"}), window)
    assert (running["billing"], running["actions"], running["state_now"]) == (True, ["stop"], "running")
    ended = with_actions(cast("RentedRow", {**row, "window_stage": "COMPLETED"}), window)
    assert (ended["billing"], ended["actions"], ended["state_now"]) == (False, [], "ended")


def test_a_providers_part_is_registered_by_key_found_by_type_and_brings_its_routes() -> None:
    """api/parts.py: a provider's own API object and routes reach NodeApi without the API naming it."""
    from aiohttp import web

    from app.services.api import parts
    from app.services.api.core import NodeApi
    from app.services.api.rented import RentedApi
    from app.services.errors import FeatureMissing
    from app.services.node import Node

    class MyCloudApi:
        def __init__(self, node: Node) -> None:
            self.node = node

    class Elsewhere:
        pass

    async def hello(request: web.Request) -> web.Response:
        return web.json_response({"hello": True})

    parts.register_part("my-cloud", MyCloudApi, lambda api, rented: [("GET", "/my-cloud/hello", hello)])
    try:
        node = cast(Node, object())
        made = {p.key: p for p in parts.parts_for(node, cast(RentedApi, None))}
        assert isinstance(made["my-cloud"].api, MyCloudApi) and made["my-cloud"].routes == [("GET", "/my-cloud/hello", hello)]
        api = NodeApi.__new__(NodeApi)  # only the parts: a whole node is not needed to find one
        api.parts = list(made.values())
        assert api.part(MyCloudApi) is made["my-cloud"].api
        with pytest.raises(FeatureMissing, match="no Elsewhere"):
            api.part(Elsewhere)
    finally:
        parts._MAKERS.pop("my-cloud")
