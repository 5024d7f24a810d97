"""Hugging Face behind the provider seam (app/services/rented/provider.py): an Inference Endpoint, a
batch window (a Job) and the router. The endpoints' and the windows' controllers (lifecycle.py,
jobs_lifecycle.py), driven by the rented nodes' one loop (rented/provider_loop.py), poll, bill and
pause; these say what a state means for money and which actions a person may take, and
forward the actions to the operations (rented_ops.py, jobs_ops.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.errors import RefusedError
from app.services.hf import states
from app.services.hf.jobs_models import TERMINAL
from app.services.hf.jobs_ops import window_refusal
from app.services.rented.decl import DeclRules
from app.services.rented.operations import ENDPOINTS, WINDOWS, EndpointOperations, WindowOperations
from app.services.rented.provider import (
    Action,
    BaseProvider,
    Price,
    ProviderState,
    ServiceKey,
    State,
    WireTraits,
)

if TYPE_CHECKING:
    from app.services.api.rows import RentedRow
    from app.services.hf.jobs_lifecycle import JobLifecycle
    from app.services.hf.jobs_ops import HfJobs
    from app.services.hf.lifecycle import HfLifecycle
    from app.services.hf.rented_ops import HfRented
    from app.services.hf.service import HfService
    from app.services.rented.upstream import RentedUpstream

ENDPOINT, JOB, ROUTER = "huggingface-endpoint", "huggingface-job", "huggingface-router"
# Hugging Face's own services, kept in the rented manager's provider registry (``node.rented.providers``):
# the account (sign-in, look-ups); and what it offers any caller (rented/operations.py): creating
# endpoints (HfRented) and starting batch windows (HfJobs).
ACCOUNT: ServiceKey[HfService] = ServiceKey(ENDPOINT, "account")
ENDPOINT_OPS: ServiceKey[EndpointOperations] = ENDPOINTS.by(ENDPOINT)
WINDOW_OPS: ServiceKey[WindowOperations] = WINDOWS.by(JOB)
# The providers a declaration may name that Hugging Face registers (the CLI's help lists them: app/cli_hf).
PROVIDERS: tuple[str, ...] = (ENDPOINT, JOB, ROUTER)

ENDPOINT_STATES: dict[str, State] = {
    "running": State.RUNNING, "scaledToZero": State.COLD, "paused": State.PAUSED,
    "pending": State.STARTING, "initializing": State.STARTING, "updating": State.STARTING,
    "failed": State.FAILED, "updateFailed": State.FAILED,
}
JOB_STAGES: dict[str, State] = {
    "SCHEDULING": State.STARTING, "LOADING": State.STARTING, "UPDATING": State.STARTING, "RUNNING": State.RUNNING,
    "ERROR": State.FAILED, "TIMED_OUT": State.ENDED, "COMPLETED": State.ENDED, "CANCELED": State.ENDED,
    "DELETED": State.ENDED,
}

# HF's proxy holds a request while a replica starts for as long as X-Scale-Up-Timeout says; any 503 from
# an endpoint is a replica still starting; its state comes from the management API (lifecycle.py).
# Its /health is answered by HF's proxy without waking the endpoint; TGI is HF's default engine (/info).
ENDPOINT_TRAITS = WireTraits(states=ENDPOINT_STATES, wait_header="x-scale-up-timeout", warms_on_503=True,
                             state_polled=True, health_first=True, asks_info=True)
JOB_TRAITS = WireTraits(states=JOB_STAGES, url_is_identity=False, asks_info=True)  # a Job's URL is new with each job
# The router fronts many providers' models: the declared ones are what this node serves; its model list
# prices each (per token); it has no /info.
ROUTER_TRAITS = WireTraits(per_token=True, declared_models=True, lists_token_prices=True)


class EndpointProvider(BaseProvider):
    name = ENDPOINT
    display_name = "Hugging Face Inference Endpoints"
    # A replica's start (image pull, weights) takes minutes; ``endpoint: NS/NAME`` is resolved (rented_ops.py).
    decl_rules = DeclRules(cold_start_s=600.0, by_endpoint=True)
    capabilities = frozenset({Action.PAUSE, Action.RESUME, Action.DELETE})
    traits = ENDPOINT_TRAITS

    def __init__(self, ops: HfRented) -> None:
        self.ops = ops

    @property
    def controller(self) -> HfLifecycle:
        return self.ops.lifecycle  # driven by the rented nodes' one loop (rented/provider_loop.py)

    def state(self, row: RentedRow) -> ProviderState:
        raw = row["provider_state"]
        if raw is None:  # not seen on Hugging Face yet
            return super().state(row)
        return ProviderState(ENDPOINT_STATES.get(raw, State.UNKNOWN), raw in states.BILLED, row["provider_message"], raw)

    def allowed(self, row: RentedRow, state: ProviderState) -> frozenset[Action]:
        if not row["lifecycle"]["managed"]:
            return frozenset()
        raw = state.raw
        allowed = {Action.DELETE} if row["endpoint"] else set()
        if raw in states.PAUSABLE:
            allowed.add(Action.PAUSE)
        if raw in states.RESUMABLE:
            allowed.add(Action.RESUME)
        return frozenset(allowed)

    async def pause(self, name: str) -> None:
        await self.ops.pause(name)

    async def resume(self, name: str) -> None:
        await self.ops.resume(name)

    async def delete(self, name: str) -> None:
        await self.ops.delete(name)


class JobProvider(BaseProvider):
    """A batch window: billed from the job's start; never paused or resumed, only stopped (cancelled)."""

    name = JOB
    display_name = "Hugging Face Jobs"
    capabilities = frozenset({Action.STOP})
    traits = JOB_TRAITS

    def __init__(self, ops: HfJobs) -> None:
        self.ops = ops

    @property
    def controller(self) -> JobLifecycle:
        return self.ops.lifecycle  # driven by the rented nodes' one loop (rented/provider_loop.py)

    def state(self, row: RentedRow) -> ProviderState:
        stage = row.get("window_stage")
        if "window_job" not in row or stage is None:
            return super().state(row)
        return ProviderState(JOB_STAGES.get(stage, State.UNKNOWN), stage in states.JOB_BILLED, row["provider_message"], stage)

    def allowed(self, row: RentedRow, state: ProviderState) -> frozenset[Action]:
        return frozenset({Action.STOP}) if "window_job" in row and state.raw not in TERMINAL else frozenset()

    async def stop(self, name: str) -> None:
        await self.ops.stop(name)

    def refusal(self, action: Action, name: str) -> RefusedError:
        return window_refusal(name, action.value)

    async def stop_for_exit(self, name: str) -> None:
        await self.ops.stop(name, on_exit=True)

    async def stop_for_budget(self, name: str, cause: str, why: str) -> None:
        # Sent now with its own reason; a cancel HF refuses stays owed and the lifecycle asks again.
        await self.ops.stop_with_reason(name, cause, why)

    def charge_due(self, name: str) -> None:
        self.ops.lifecycle.charge_due(name)  # every minute HF has started by now, not by the last tick

    def next_charge_in(self, name: str) -> float | None:
        return self.ops.lifecycle.next_charge_in(name)


class RouterProvider(BaseProvider):
    """The router: billed per token of each answer, nothing to pause."""

    name = ROUTER
    display_name = "Hugging Face router"
    traits = ROUTER_TRAITS

    def price(self, node: RentedUpstream) -> Price:
        return Price(None, node.decl.price_per_mtok_in, node.decl.price_per_mtok_out)
