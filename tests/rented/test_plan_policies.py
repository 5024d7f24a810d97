"""The four policies in build_plan, table-driven; and who may use a rented node (caller rules)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.services.backends.base import ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.hf.providers import ENDPOINT_STATES
from app.services.inference import Caller
from app.services.rented.decl import validate_decl
from app.services.rented.hooks import LifecycleHooks
from app.services.rented.provider import WireTraits
from app.services.rented.upstream import RentedUpstream
from app.services.routing.plan import build_plan
from app.services.translate.shapes import Api

MODEL = "shared-model:latest"


class Lan(Upstream):
    kind = "engine"

    def __init__(self, name: str, in_flight: int = 0, capacity: int = 1) -> None:
        self.key, self.node_name, self.node_id = f"engine:{name}", "sponsor", "sponsor-id"
        self.in_flight, self.capacity = in_flight, capacity

    def models(self) -> list[ModelEntry]:
        return [ModelEntry(MODEL)]

    def api_for(self, client_api: Api) -> Api:
        return client_api

    async def open(self, request: UpstreamRequest) -> Opened:
        raise NotImplementedError


@pytest.fixture
async def make_rented() -> AsyncIterator[object]:
    made: list[RentedUpstream] = []

    def make(policy: str = "when-no-local-node", **extra: object) -> RentedUpstream:
        decl = validate_decl({"name": "hf", "url": "https://gpu.example.com", "models": [MODEL],
                              "routing": {"use": policy}, **extra})
        node = RentedUpstream(decl, sponsor_name="sponsor", sponsor_id="sponsor-id", token=None,
                              traits=WireTraits(states=ENDPOINT_STATES))  # the words an endpoint reports
        made.append(node)
        return node

    yield make
    for node in made:
        await node.aclose()


def names(plan_candidates: list[Upstream]) -> list[str]:
    return [u.display_name() for u in plan_candidates]


# local owner: "free", "busy" (in flight at capacity) or None (no LAN node advertises the model)
POLICY_TABLE = [
    ("when-no-local-node", "free", ["local", "hf"], []),
    ("when-no-local-node", "busy", ["local", "hf"], []),
    ("when-no-local-node", None, ["hf"], []),
    ("overflow", "free", ["local", "hf"], []),
    ("overflow", "busy", ["hf", "local"], []),
    ("overflow", None, ["hf"], []),
    ("prefer", "free", ["hf", "local"], []),
    ("prefer", "busy", ["hf", "local"], []),
    ("prefer", None, ["hf"], []),
    ("never", "free", ["local"], [("hf", "routing policy is 'never'")]),
    ("never", "busy", ["local"], [("hf", "routing policy is 'never'")]),
    ("never", None, [], [("hf", "routing policy is 'never'")]),
]


@pytest.mark.parametrize(("policy", "local", "order", "refused"), POLICY_TABLE)
def test_policy_table(make_rented: object, policy: str, local: str | None, order: list[str],
                      refused: list[tuple[str, str]]) -> None:
    upstreams: list[Upstream] = [make_rented(policy)]  # type: ignore[operator]
    if local is not None:
        upstreams.append(Lan("local", in_flight=1 if local == "busy" else 0))
    for caller in (None, Caller("app")):
        plan = build_plan(MODEL, upstreams, caller)
        assert names(plan.candidates) == order, (policy, local, caller)
        assert plan.refused == refused


def test_first_candidate_is_local_for_default_and_rented_for_busy_overflow(make_rented: object) -> None:
    # The end-to-end story in one place: the head of the plan is who serves.
    for policy, local, head in (("when-no-local-node", "free", "local"), ("overflow", "busy", "hf"),
                                ("overflow", "free", "local"), ("prefer", "free", "hf")):
        upstreams = [make_rented(policy), Lan("local", in_flight=1 if local == "busy" else 0)]  # type: ignore[operator]
        assert names(build_plan(MODEL, upstreams).candidates)[0] == head


def test_sharing_off_refuses_peers_by_name(make_rented: object) -> None:
    rented = make_rented()  # type: ignore[operator]
    plan = build_plan(MODEL, [rented], Caller("peer app", origin_node="B", from_peer=True, local_only=True))
    assert plan.candidates == []
    [(name, reason)] = plan.refused
    assert name == "hf" and "sharing with the cluster is off" in reason and "sponsor" in reason
    # A caller on the sponsor itself may use it.
    assert names(build_plan(MODEL, [rented], Caller("local app")).candidates) == ["hf"]


def test_sharing_on_serves_peers(make_rented: object) -> None:
    rented = make_rented(share_with_cluster=True)  # type: ignore[operator]
    plan = build_plan(MODEL, [rented], Caller("peer app", origin_node="B", from_peer=True, local_only=True))
    assert names(plan.candidates) == ["hf"]


def test_off_lan_denied_for_this_nodes_callers(make_rented: object) -> None:
    plan = build_plan(MODEL, [make_rented(), Lan("local")], Caller("app", allow_off_lan=False))  # type: ignore[operator]
    assert names(plan.candidates) == ["local"]
    assert plan.refused[0][0] == "hf" and "off_lan: deny" in plan.refused[0][1]


def test_ineligible_states_are_refused_with_reasons(make_rented: object) -> None:
    rented = make_rented()  # type: ignore[operator]
    rented.credential_error = "rented node hf answered 401: Invalid credentials"
    assert build_plan(MODEL, [rented]).refused == [("hf", "credential refused: rented node hf answered 401: "
                                                            "Invalid credentials")]
    rented.credential_error = None
    rented.set_state_word("paused")
    [(_, reason)] = build_plan(MODEL, [rented]).refused
    assert reason == "paused on the provider; wake on request is off"
    rented.set_state_word("failed", "Endpoint failed to deploy")
    assert build_plan(MODEL, [rented]).refused == [("hf", "unhealthy: Endpoint failed to deploy")]
    rented.set_state_word("initializing")
    assert "starting" in build_plan(MODEL, [rented]).refused[0][1]
    rented.set_state_word("scaledToZero")  # eligible with a cold start
    assert names(build_plan(MODEL, [rented]).candidates) == ["hf"]
    rented.set_state_word("running")
    rented.budget_reason = "budget reached: $1.00 of $1.00 per day"
    assert build_plan(MODEL, [rented]).refused == [("hf", "budget reached: $1.00 of $1.00 per day")]


def test_paused_with_wake_on_request_is_eligible_once_a_controller_can_wake_it(make_rented: object) -> None:
    rented = make_rented(lifecycle={"managed": True, "wake_on_request": True})  # type: ignore[operator]
    rented.set_state_word("paused")
    assert build_plan(MODEL, [rented]).candidates == []  # nobody can resume it yet
    hooks = LifecycleHooks()

    async def resume(node: RentedUpstream) -> None:
        node.set_state_word("running")

    hooks.before_route.append(resume)
    rented.hooks = hooks
    assert names(build_plan(MODEL, [rented]).candidates) == ["hf"]


def test_allowlist_limits_what_is_routed(make_rented: object) -> None:
    rented = make_rented(models=[MODEL, "other"], allow_models=["other"])  # type: ignore[operator]
    assert build_plan(MODEL, [rented]).candidates == []
    assert names(build_plan("other:latest", [rented]).candidates) == ["hf"]
