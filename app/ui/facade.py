"""The tray's one window onto a node: a thin adapter over the service API (``app.services.api``),
the same one the control API's routes call, so the tray holds no rules of its own and can do
nothing the CLI cannot. Views and the tray talk to a ``NodeFacade`` only; their tests drive a real
in-process node through it (``tests/ui/conftest.py::make_app``), never a stand-in.

A provider's own account and look-ups have their facade in its folder (``app/ui/<provider>/``).
Snapshots are the ``TypedDict``s of ``app.services.api`` (``rows``, ``snapshots``, ``plans``...): the
shapes ``pairwise ... --json`` prints, so a view misreading a key fails mypy, not the user. Actions are
coroutines; they raise ``PairwiseError`` subclasses whose title and message the UI shows as is
(``FeatureMissing`` when the node has no such feature).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.services.api import FoundEngine, NodeApi
from app.services.api.batch import BatchObject
from app.services.api.changes import NewKey, RentedChange, SettingsChange
from app.services.api.models import CopyRow, ModelRow, SuggestionRow
from app.services.api.plans import EndpointPlan, WindowFlavor, WindowPlan
from app.services.api.rented import ActionResult
from app.services.api.rows import NodeRow, RentedActionRow, RentedRow
from app.services.api.snapshots import (
    EngineRow,
    InviteRow,
    InviteStatus,
    JobRow,
    KeyListRow,
    KeyRow,
    LanStatus,
    NewKeyRow,
    NodeStatus,
    PeerRentedRow,
    PeerRow,
    PinRow,
    RequestersSummary,
    SettingsRow,
    SpendTodayRow,
    UnpairedRow,
)
from app.services.events import Event, PausingOnExit


class NodeFacade:
    def __init__(self, api: NodeApi) -> None:
        self.api = api

    # -- snapshots -------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.api.name

    @property
    def home(self) -> str:
        return self.api.home

    def is_demo(self) -> bool:
        return self.api.demo

    def status(self) -> NodeStatus:
        return self.api.status()

    def nodes(self) -> list[NodeRow]:
        return self.api.nodes(own_detail=True)

    def rented(self) -> list[RentedActionRow]:
        return self.api.rented.list()

    def rented_row(self, name: str) -> RentedActionRow | None:
        return self.api.rented.row(name)

    def jobs(self, *, active_only: bool = False, limit: int = 200) -> list[JobRow]:
        return self.api.jobs(active_only=active_only, limit=limit)

    def engines(self) -> list[EngineRow]:
        return self.api.engines()

    def off_lan_policy(self) -> str:
        return self.api.off_lan_policy()

    def pause_on_exit_targets(self) -> list[str]:
        return self.api.rented.pause_on_exit_targets()

    def cluster_available(self) -> bool:
        return self.api.cluster.available

    def peers(self) -> list[PeerRow]:
        return self.api.cluster.peers()

    # -- batches ---------------------------------------------------------------------------------------------

    def batches(self, limit: int = 50) -> list[BatchObject]:
        return self.api.batches.list(limit)

    async def batch_cancel(self, batch_id: str) -> BatchObject:
        """Cancel a batch: it goes ``cancelling`` then ``cancelled``; the lines already done are kept."""
        return self.api.batches.cancel(batch_id)

    # -- rented nodes ----------------------------------------------------------------------------------------

    async def rented_attach(self, decl: dict[str, Any], token: str | None) -> RentedActionRow:
        return await self.api.rented.attach(decl, token)

    async def rented_set(self, name: str, change: RentedChange) -> RentedActionRow:
        return await self.api.rented.set(name, change)

    async def rented_detach(self, name: str) -> None:
        await self.api.rented.detach(name)

    async def rented_plan(self, params: dict[str, Any]) -> EndpointPlan:
        return await self.api.rented.plan(params)

    async def rented_create(self, params: dict[str, Any]) -> RentedRow:
        return await self.api.rented.create(params)

    async def rented_act(self, name: str, action: str, *, confirm: str | None = None) -> ActionResult:
        """An action the row's provider offers (its ``actions``), as ``POST /rented/{name}/{action}``."""
        return await self.api.rented.act(name, action, confirm=confirm)

    async def rented_pause(self, name: str) -> ActionResult:
        return await self.rented_act(name, "pause")

    async def rented_resume(self, name: str) -> ActionResult:
        return await self.rented_act(name, "resume")

    async def rented_stop(self, name: str) -> ActionResult:
        """End a fixed window now (its provider cancels it)."""
        return await self.rented_act(name, "stop")

    async def rented_pause_for_exit(self, name: str) -> RentedRow:
        """What pause on exit does to ``name``: pause an endpoint, cancel a batch window."""
        return await self.api.rented.pause_for_exit(name)

    async def rented_delete(self, name: str) -> None:
        """Delete it on its provider (irreversible: the views ask first) and forget it."""
        await self.rented_act(name, "delete", confirm=name)

    async def window_flavors(self) -> list[WindowFlavor]:
        return await self.api.rented.window_flavors()

    async def window_plan(self, params: dict[str, Any]) -> WindowPlan:
        return await self.api.rented.window_plan(params)

    async def window_create(self, params: dict[str, Any]) -> RentedRow:
        return await self.api.rented.window_create(params)

    # -- requesters: keys, the LAN door, spend by requester ---------------------------------------------------

    def requesters_summary(self) -> RequestersSummary | None:
        return self.api.keys.summary()

    def keys(self) -> list[KeyListRow]:
        return self.api.keys.list()

    async def key_create(self, new: NewKey) -> NewKeyRow:
        return self.api.keys.create(new)

    async def key_revoke(self, name: str) -> KeyRow:
        return self.api.keys.revoke(name)

    def lan_status(self) -> LanStatus | None:
        return self.api.keys.lan_status()

    async def set_lan(self, listen: str | None) -> LanStatus:
        return await self.api.keys.set_lan(listen)

    def rented_today(self, name: str) -> list[SpendTodayRow]:
        return self.api.keys.today(name)

    # -- first run -------------------------------------------------------------------------------------------

    async def discover_engines(self, ports: list[int] | None = None) -> list[FoundEngine]:
        return await self.api.first_run.discover_engines(ports)

    async def adopt_engines(self, found: list[FoundEngine]) -> list[EngineRow]:
        return await self.api.first_run.adopt_engines(found)

    def front_door_listen(self) -> str:
        return self.api.first_run.front_door_listen()

    def front_door_address(self) -> str:
        return self.api.first_run.front_door_address()

    def frontdoor_open(self) -> bool:
        return self.api.first_run.frontdoor_open()

    def frontdoor_free(self) -> bool:
        return self.api.first_run.frontdoor_free()

    async def open_frontdoor(self) -> None:
        await self.api.first_run.open_frontdoor()

    def welcomed(self) -> bool:
        return self.api.first_run.welcomed()

    def mark_welcomed(self) -> None:
        self.api.first_run.mark_welcomed()

    # -- settings, engines, cluster --------------------------------------------------------------------------

    async def change_settings(self, change: SettingsChange) -> SettingsRow:
        return await self.api.change_settings(change)

    async def engine_add(self, data: Mapping[str, object], token: str | None) -> EngineRow:
        return await self.api.engine_add(data, token)

    async def engine_remove(self, name: str) -> None:
        await self.api.engine_remove(name)

    async def pair_invite(self, ttl_s: float = 300.0) -> InviteRow:
        return await self.api.cluster.invite(ttl_s)

    async def pair_wait(self, timeout_s: float | None = None) -> PinRow:
        return await self.api.cluster.wait(timeout_s)

    def pair_invite_status(self) -> InviteStatus:
        """The open invite's state: pending/used/expired/void, the wrong PINs tried and from where."""
        return self.api.cluster.invite_status()

    async def pair_cancel(self) -> None:
        await self.api.cluster.cancel()

    async def pair_join(self, address: str, pin: str) -> PinRow:
        return await self.api.cluster.join(address, pin)

    async def unpair(self, node_id: str) -> UnpairedRow:
        return await self.api.cluster.unpair(node_id)

    def peer_rented(self) -> list[PeerRentedRow]:
        """Each peer's shared rented node and the policy this node routes to it under."""
        return self.api.cluster.peer_rented()

    async def set_peer_rented(self, node_id: str, policy: str) -> list[PeerRentedRow]:
        """``pairwise settings peer-rented NODE --use POLICY`` (``default`` forgets the rule)."""
        return await self.api.cluster.set_peer_rented(node_id, policy)

    # -- models and their names ------------------------------------------------------------------------------

    def models(self) -> list[ModelRow]:
        return self.api.models.models()

    def model_copies_like(self, name: str) -> list[CopyRow]:
        """The LAN copies of the model ``name`` is (linked, or by a name that looks like it)."""
        return self.api.models.copies_like(name)

    def model_groups(self) -> list[list[str]]:
        return self.api.models.names.groups()

    async def models_same(self, names: list[str]) -> list[str]:
        return self.api.models.same(names)

    async def models_unlink(self, names: list[str]) -> list[list[str]]:
        return self.api.models.unlink(names)

    async def models_suggest(self) -> list[SuggestionRow]:
        return await self.api.models.suggest()

    def waive_pause_on_exit(self, names: list[str]) -> None:
        self.api.rented.waive_pause_on_exit(names)

    def recheck_rented(self) -> None:
        self.api.rented.recheck()

    # -- lifecycle -------------------------------------------------------------------------------------------

    def watch_pause_on_exit(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(rented node name)`` as pause-on-exit reaches each node; returns the unwatch."""

        def on_event(event: Event) -> None:
            if isinstance(event, PausingOnExit):
                callback(event.node)

        return self.api.on_event(on_event)

    async def stop(self, progress: Callable[[str], None] | None = None) -> None:
        await self.api.stop(progress)
