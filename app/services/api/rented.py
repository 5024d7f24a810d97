"""``RentedApi``: rented nodes (attach, apply, set, detach, probe), the actions their provider offers
(``act``: pause, resume, stop, delete) and, where a provider creates them, new endpoints and batch
windows (through the operations it offers, rented/operations.py: the one named, or the only one).
Rows carry ``billing``, ``actions`` and ``capabilities`` as the node's provider says
(rented/provider.py), so neither this module nor a view knows any provider's states."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from app.services.api import glossary
from app.services.api.models import ModelsApi
from app.services.api.plans import Detached, EndpointPlan, WindowFlavor, WindowPlan
from app.services.api.rows import RentedActionRow, RentedRow
from app.services.errors import ConfigError, FeatureMissing, RefusedError
from app.services.rented.caps import resume_refusal
from app.services.rented.operations import ENDPOINTS, WINDOWS, EndpointOperations, WindowOperations
from app.services.rented.provider import Action, Provider, run_action
from app.services.routing.names import MAX_GROUP
from app.services.translate.shapes import canonical_model

if TYPE_CHECKING:
    from app.services.node import Node
    from app.services.rented.change import RentedChange
    from app.services.rented.manager import RentedManager
    from app.services.rented.spend import SpendRepair

ActionName = Literal["pause", "resume", "stop", "delete"]
ACTIONS: tuple[str, ...] = tuple(a.value for a in Action)


class ActionResult(TypedDict):
    """What ``POST /rented/{name}/{action}`` answers: the node's row after it (None once deleted)."""

    name: str
    action: str
    row: RentedActionRow | None


def with_actions(row: RentedRow, provider: Provider) -> RentedActionRow:
    """A sponsor's rented row with what a person can do about it now, and whether it costs money now,
    as its provider says."""
    state = provider.state(row)
    allowed = provider.allowed(row, state)
    return {**row, "provider_label": glossary.provider(provider.name), "billing": state.billing,
            "pausable": Action.PAUSE in allowed,
            "resumable": Action.RESUME in allowed, "stoppable": Action.STOP in allowed,
            "state_now": state.state.value, "actions": sorted(a.value for a in allowed),
            "capabilities": sorted(a.value for a in provider.capabilities)}


def _same_as(params: dict[str, Any]) -> list[str]:
    """The local names a created copy is one model with (``--same-as``), checked before anything is rented."""
    given = params.get("same_as") or []
    if isinstance(given, str):
        given = [given]
    if not isinstance(given, list) or not all(isinstance(n, str) and n.strip() for n in given):
        raise ConfigError("'same_as' must be a list of model names")
    model = params.get("model")
    names = [n.strip() for n in given if canonical_model(n.strip()) != canonical_model(str(model or ""))]
    if len(names) > MAX_GROUP - 1:
        raise ConfigError(f"a model may have at most {MAX_GROUP} names")
    return list(dict.fromkeys(names))


class RentedApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    def _manager(self) -> RentedManager:
        if self.node.rented is None:
            raise FeatureMissing("this node has no rented-node manager attached")
        return self.node.rented

    def _ops(self, provider: str | None) -> EndpointOperations:
        """The create operations of ``provider``, or of the only provider offering them (operations.py)."""
        return ENDPOINTS.of(self.node.rented.providers if self.node.rented is not None else None, provider)

    def _windows(self, provider: str | None = None) -> WindowOperations:
        return WINDOWS.of(self.node.rented.providers if self.node.rented is not None else None, provider)

    # -- rows ------------------------------------------------------------------------------------------------

    def _rows(self, rows: builtins.list[RentedRow]) -> builtins.list[RentedActionRow]:
        manager = self._manager()
        return [with_actions(row, manager.providers.of(row["provider"])) for row in rows]

    def _row(self, row: RentedRow) -> RentedActionRow:
        return with_actions(row, self._manager().providers.of(row["provider"]))

    def list(self) -> builtins.list[RentedActionRow]:
        """This node's rented nodes (empty on a node without the feature)."""
        return self._rows(self._manager().list()) if self.node.rented is not None else []

    def row(self, name: str) -> RentedActionRow | None:
        return next((r for r in self.list() if r["name"] == name), None)

    def show(self, name: str) -> RentedActionRow:
        return self._row(self._manager().show(name))

    def repair_spend(self, accept_usd: float | None = None, name: str | None = None) -> SpendRepair:
        """``pairwise spend repair``: a new spend account from the job records, or from a stated figure."""
        return self._manager().repair_spend(accept_usd, name)

    def pause_on_exit_targets(self) -> builtins.list[str]:
        """Rented nodes that stopping this node will pause (an endpoint: managed, pause on exit on, not
        already paused) or cancel (a batch window that has not ended, pause on exit on)."""
        return [r["name"] for r in self.list()
                if r["lifecycle"]["managed"] and r["lifecycle"]["pause_on_sponsor_exit"]
                and (r["pausable"] or r["stoppable"])]

    async def pause_for_exit(self, name: str) -> RentedActionRow:
        """What pause on exit does to one rented node, now (its provider's: pause, or stop a window)."""
        manager = self._manager()
        await manager.providers.of(manager.get(name).decl.provider).stop_for_exit(name)
        return self.show(name)

    async def act(self, name: str, action: str, *, confirm: str | None = None) -> ActionResult:
        """``POST /rented/{name}/{action}``: an action its provider offers, refused by name otherwise.
        ``delete`` is irreversible on the provider: ``confirm`` must repeat the name."""
        if action not in ACTIONS:
            raise ConfigError(f"no action {action!r} on a rented node (actions: {', '.join(ACTIONS)})")
        manager = self._manager()
        node = manager.get(name)
        provider = manager.providers.of(node.decl.provider)
        if action == Action.RESUME and provider.polls:
            # A resume never bills past the caps: for a polled provider the check is made here, on the
            # figures as they stand now (a new UTC day frees the cap); a provider with a controller of
            # its own refreshes the price first and checks itself.
            manager.check_budget(node)
            refusal = resume_refusal(node)
            if refusal is not None:
                raise RefusedError(f"refused to resume {name}: {refusal}", title="Budget reached")
        if action == Action.DELETE and confirm != name:
            raise ConfigError(f"deleting {name} is irreversible on its provider: confirm with {{\"confirm\": \"{name}\"}}")
        await run_action(provider, Action(action), name)
        row = self.row(name)
        return {"name": name, "action": action, "row": row}

    def waive_pause_on_exit(self, names: builtins.list[str]) -> None:
        """The user chose to stop while these still bill (the tray tried to pause them and said so): the
        node's stop does not keep trying; the next start pauses them (reconcile) and charges the gap."""
        manager = self.node.rented
        for name in names:
            node = manager.nodes.get(name) if manager is not None else None
            if node is not None:
                node.exit_pause_waived = True

    def recheck(self) -> None:
        """Ask the provider about every rented node now (the machine woke from sleep)."""
        if self.node.rented is not None:
            self.node.rented.recheck()

    # -- declarations ----------------------------------------------------------------------------------------

    async def attach(self, decl: dict[str, Any], token: str | None) -> RentedActionRow:
        return self._row(await self._manager().attach(decl, token))

    async def apply(self, items: builtins.list[dict[str, Any]], token: str | None) -> builtins.list[RentedActionRow]:
        if not all(isinstance(i, dict) for i in items):
            raise ConfigError("apply needs {\"declarations\": [ {...}, ... ]}")
        return self._rows(await self._manager().apply(items, token))

    async def set(self, name: str, change: RentedChange, token: str | None = None) -> RentedActionRow:
        """A change spelt as the declaration nests it (``RentedChange``): applied whole or refused whole."""
        return self._row(await self._manager().set(name, change, token))

    async def detach(self, name: str, *, force: bool = False) -> Detached:
        """Detach (forget) a rented node; refused while its endpoint bills and cannot be paused, unless ``force``."""
        await self._manager().detach(name, force=force)
        return Detached(detached=name)

    async def probe(self, name: str) -> RentedActionRow:
        """Probe again now (models, credential, public flag)."""
        manager = self._manager()
        node = manager.get(name)
        await node.probe()
        manager.changed(f"rented node {node.name} probed")
        return self.show(node.name)

    # -- a provider's new endpoints ---------------------------------------------------------------------------

    async def plan(self, params: dict[str, Any], provider: str | None = None) -> EndpointPlan:
        """What ``create(params)`` would do: price, GPU, what the budget allows (nothing rented yet), and
        the names the new copy will be linked with (``same_as``: the user's word that they are one model).
        ``provider``: whose endpoint (None: the one provider here that creates endpoints)."""
        same_as = _same_as(params)
        plan = await self._ops(provider).plan(params)
        plan["same_as"] = same_as
        return plan

    async def create(self, params: dict[str, Any], provider: str | None = None) -> RentedRow:
        same_as = _same_as(params)
        row = await self._ops(provider).create(params)
        if same_as:
            # After the create, so a refused create links nothing; a link that cannot be saved says so and
            # leaves the new node attached and managed (it pauses when idle like any other).
            try:
                ModelsApi(self.node).same([*same_as, str(params["model"])])
            except ConfigError as exc:
                raise ConfigError(f"rented node {row['name']} was created and attached, but its names could not be "
                                  f"linked ({exc.message}): run 'pairwise models same {' '.join(same_as)} "
                                  f"{params['model']}'") from exc
        return row

    async def pause(self, name: str) -> RentedActionRow:
        return await self._acted(name, "pause")

    async def resume(self, name: str) -> RentedActionRow:
        return await self._acted(name, "resume")

    async def _acted(self, name: str, action: str) -> RentedActionRow:
        row = (await self.act(name, action))["row"]
        if row is None:
            raise ConfigError(f"rented node {name} is gone")
        return row

    # -- a provider's batch windows ---------------------------------------------------------------------------

    async def window_flavors(self, provider: str | None = None) -> builtins.list[WindowFlavor]:
        return await self._windows(provider).flavors()

    async def window_plan(self, params: dict[str, Any], provider: str | None = None) -> WindowPlan:
        """What ``window_create(params)`` would start: the whole window's cost against the caps
        (refused if they cannot pay for it). ``provider``: whose window (None: the one provider here
        that starts them)."""
        return await self._windows(provider).plan(params)

    async def window_create(self, params: dict[str, Any], provider: str | None = None) -> RentedRow:
        return await self._windows(provider).create(params)

    async def window_stop(self, name: str) -> RentedActionRow:
        return await self._acted(name, "stop")

    def window_extend(self, name: str, provider: str | None = None) -> None:
        """Lengthen a window, as its provider allows (refused by name where it cannot)."""
        self._windows(provider or self._provider_of(name)).extend(name)

    def window_logs(self, name: str, *, follow: bool, tail: int | None,
                    provider: str | None = None) -> AsyncIterator[tuple[str, str]]:
        return self._windows(provider or self._provider_of(name)).logs(name, follow=follow, tail=tail)

    def _provider_of(self, name: str) -> str | None:
        """The provider of batch window ``name``; None when no provider of windows has it (no such node,
        or not a window): the only provider of windows then says why in its own words."""
        manager = self.node.rented
        node = manager.nodes.get(name) if manager is not None else None
        if manager is None or node is None or node.decl.provider not in WINDOWS.among(manager.providers):
            return None
        return node.decl.provider
