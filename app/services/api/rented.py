"""``RentedApi``: rented nodes (attach, apply, set, detach, probe), and on Hugging Face their
lifecycle (plan, create, pause, resume, delete) and batch windows (flavors, plan, create, stop,
logs). Rows carry ``billing``, ``pausable`` and ``resumable`` so no view copies HF's state sets."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from app.services.api.models import ModelsApi
from app.services.api.rows import RentedActionRow, RentedRow
from app.services.errors import ConfigError, FeatureMissing
from app.services.hf import states
from app.services.hf.jobs_models import TERMINAL
from app.services.routing.names import MAX_GROUP
from app.services.translate.shapes import canonical_model

if TYPE_CHECKING:
    from app.services.hf.jobs_ops import HfJobs
    from app.services.hf.rented_ops import HfRented
    from app.services.node import Node
    from app.services.rented.manager import RentedManager
    from app.services.rented.spend import SpendRepair


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


def with_actions(row: RentedRow) -> RentedActionRow:
    """A sponsor's rented row with what a person can do about it, and whether it costs money now.
    A batch window (a Job Pairwise started) is never pausable or resumable; it is ``stoppable``
    (its job cancelled) until it has ended."""
    hf_state = row["hf_state"]
    managed = row["lifecycle"]["managed"]
    if "hf_job" in row:
        stage = row.get("hf_stage")
        return {**row, "billing": stage in states.JOB_BILLED, "pausable": False, "resumable": False,
                "stoppable": stage not in TERMINAL}
    if hf_state is not None:
        billing = hf_state in states.BILLED
    else:  # not a managed HF endpoint: an eligible node with an hourly price is taken to be billing
        billing = row["state"] == "eligible" and bool(row["price_per_hour"])
    return {**row, "billing": billing, "pausable": managed and hf_state in states.PAUSABLE,
            "resumable": managed and hf_state in states.RESUMABLE, "stoppable": False}


class RentedApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    def _manager(self) -> RentedManager:
        if self.node.rented is None:
            raise FeatureMissing("this node has no rented-node manager attached")
        return self.node.rented

    def _ops(self) -> HfRented:
        if self.node.hf_rented is None:
            raise FeatureMissing("this node has no Hugging Face rented operations attached")
        return self.node.hf_rented

    def _windows(self) -> HfJobs:
        if self.node.hf_jobs is None:
            raise FeatureMissing("this node has no batch-window operations attached")
        return self.node.hf_jobs

    # -- rows ------------------------------------------------------------------------------------------------

    def list(self) -> builtins.list[RentedActionRow]:
        """This node's rented nodes (empty on a node without the feature)."""
        manager = self.node.rented
        return [with_actions(row) for row in manager.list()] if manager is not None else []

    def row(self, name: str) -> RentedActionRow | None:
        return next((r for r in self.list() if r["name"] == name), None)

    def show(self, name: str) -> RentedActionRow:
        return with_actions(self._manager().show(name))

    def repair_spend(self, accept_usd: float | None = None, name: str | None = None) -> SpendRepair:
        """``pairwise spend repair``: a new spend account from the job records, or from a stated figure."""
        return self._manager().repair_spend(accept_usd, name)

    def pause_on_exit_targets(self) -> builtins.list[str]:
        """Rented nodes that stopping this node will pause (an endpoint: managed, pause on exit on, not
        already paused) or cancel (a batch window that has not ended, pause on exit on)."""
        return [r["name"] for r in self.list()
                if r["lifecycle"]["managed"] and r["lifecycle"]["pause_on_sponsor_exit"]
                and (r["stoppable"] if "hf_job" in r else r["hf_state"] not in ("paused", "failed", None))]

    async def pause_for_exit(self, name: str) -> RentedRow:
        """What pause on exit does to one rented node, now: pause an endpoint, cancel a batch window."""
        row = self.show(name)
        if "hf_job" in row:
            return with_actions(await self._windows().stop(name, on_exit=True))
        return await self.pause(name)

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
        if self.node.hf_rented is not None:
            self.node.hf_rented.lifecycle.recheck_now()

    # -- declarations ----------------------------------------------------------------------------------------

    async def attach(self, decl: dict[str, Any], token: str | None) -> RentedActionRow:
        return with_actions(await self._manager().attach(decl, token))

    async def apply(self, items: builtins.list[dict[str, Any]], token: str | None) -> builtins.list[RentedActionRow]:
        if not all(isinstance(i, dict) for i in items):
            raise ConfigError("apply needs {\"declarations\": [ {...}, ... ]}")
        return [with_actions(row) for row in await self._manager().apply(items, token)]

    async def set(self, name: str, changes: dict[str, Any], token: str | None = None) -> RentedActionRow:
        return with_actions(await self._manager().set(name, changes, token))

    async def detach(self, name: str, *, force: bool = False) -> dict[str, Any]:
        """Detach (forget) a rented node; refused while its endpoint bills and cannot be paused, unless ``force``."""
        await self._manager().detach(name, force=force)
        return {"detached": name}

    async def probe(self, name: str) -> RentedActionRow:
        """Probe again now (models, credential, public flag)."""
        manager = self._manager()
        node = manager.get(name)
        await node.probe()
        manager.changed(f"rented node {node.name} probed")
        return self.show(node.name)

    # -- on Hugging Face: endpoints --------------------------------------------------------------------------

    async def plan(self, params: dict[str, Any]) -> dict[str, Any]:
        """What ``create(params)`` would do: price, GPU, what the budget allows (nothing rented yet), and
        the names the new copy will be linked with (``same_as``: the user's word that they are one model)."""
        same_as = _same_as(params)
        plan = await self._ops().plan(params)
        return {**plan, "same_as": same_as}

    async def create(self, params: dict[str, Any]) -> RentedRow:
        same_as = _same_as(params)
        row = await self._ops().create(params)
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

    async def pause(self, name: str) -> RentedRow:
        return await self._ops().pause(name)

    async def resume(self, name: str) -> RentedRow:
        return await self._ops().resume(name)

    async def delete(self, name: str) -> dict[str, Any]:
        """Delete the endpoint on Hugging Face (irreversible) and detach the node."""
        return await self._ops().delete(name)

    # -- on Hugging Face: batch windows ----------------------------------------------------------------------

    async def window_flavors(self) -> builtins.list[dict[str, Any]]:
        return [f.to_json() for f in await self._windows().flavors()]

    async def window_plan(self, params: dict[str, Any]) -> dict[str, Any]:
        """What ``window_create(params)`` would start: the whole window's cost against the caps
        (refused if they cannot pay for it)."""
        return await self._windows().plan(params)

    async def window_create(self, params: dict[str, Any]) -> RentedRow:
        return await self._windows().create(params)

    async def window_stop(self, name: str) -> RentedActionRow:
        return with_actions(await self._windows().stop(name))

    def window_extend(self, name: str) -> None:
        """Always refused, naming why (HF cannot lengthen a job)."""
        self._windows().extend(name)

    def window_logs(self, name: str, *, follow: bool, tail: int | None) -> AsyncIterator[tuple[str, str]]:
        return self._windows().logs(name, follow=follow, tail=tail)
