"""The tray's one window onto a node: snapshots to read, the control API's own service methods
to act. Views and the tray talk to a ``NodeFacade`` only, never to the services behind it, so
they can be tested against a fake and never reach into service internals.

Snapshots are plain dicts/lists (the shapes ``pairwise ... --json`` prints). Actions are
coroutines; they raise ``PairwiseError`` subclasses whose title and message the UI shows as is.
Features that are not attached to this node (the cluster, the Hugging Face lifecycle) answer
with empty snapshots and refuse actions naming what is missing (``FeatureMissing``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from app.services.errors import ConfigError, FeatureMissing
from app.services.events import NodeChanged
from app.services.firstrun.adopt import adopt, mark_welcomed, not_adopted, welcomed
from app.services.firstrun.discover import FoundEngine, discover
from app.services.firstrun.ports import frontdoor_free

if TYPE_CHECKING:
    from app.services.cluster.service import ClusterService
    from app.services.hf.jobs_ops import HfJobs
    from app.services.hf.rented_ops import HfRented
    from app.services.hf.service import HfService
    from app.services.keys.service import RequesterService
    from app.services.node import Node
    from app.services.rented.manager import RentedManager
    from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)

__all__ = ["FeatureMissing", "NodeFacade"]


def _pin_row(pin: Any) -> dict[str, Any]:
    return {"id": pin.node_id, "name": pin.name, "address": pin.address, "fingerprint": pin.fingerprint}


def _off_lan(policy: str) -> Literal["allow", "deny"]:
    if policy == "allow":
        return "allow"
    if policy == "deny":
        return "deny"
    raise ConfigError(f"off-LAN policy must be allow or deny, not {policy!r}")


class NodeFacade:
    def __init__(self, node: Node) -> None:
        self.node = node

    # -- snapshots -------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def home(self) -> str:
        return str(self.node.home.root)

    def status(self) -> dict[str, Any]:
        return self.node.status()

    def nodes(self) -> list[dict[str, Any]]:
        """Every node: this one, its rented nodes (local rows with costs), peers and their shared rented nodes."""
        rows = self.node.nodes()
        local = {r["name"]: r for r in self.rented()}
        # The sponsor's own rented rows carry what only the sponsor may see (costs, HF's message).
        return [{**r, **local[r["name"]]} if r.get("kind") == "rented" and r.get("name") in local
                and r.get("sponsor_id") == self.node.node_id else r for r in rows]

    def rented(self) -> list[dict[str, Any]]:
        manager = self.node.rented
        return manager.list() if manager is not None else []

    def rented_row(self, name: str) -> dict[str, Any] | None:
        return next((r for r in self.rented() if r.get("name") == name), None)

    def jobs(self, *, active_only: bool = False, limit: int = 200) -> list[dict[str, Any]]:
        return [j.to_json() for j in self.node.jobs.list(active_only=active_only, limit=limit)]

    def engines(self) -> list[dict[str, Any]]:
        return self.node.engines.describe()

    def off_lan_policy(self) -> str:
        return self.node.settings.off_lan

    def hf_available(self) -> bool:
        return self.node.hf is not None

    def hf_signed_in(self) -> bool:
        hf = self.node.hf
        return bool(hf is not None and hf.signed_in)

    def pause_on_exit_targets(self) -> list[str]:
        """Rented nodes that Quit will pause (managed, pause on exit on, not already paused)."""
        return [r["name"] for r in self.rented()
                if (r.get("lifecycle") or {}).get("managed") and (r.get("lifecycle") or {}).get("pause_on_sponsor_exit")
                and r.get("hf_state") not in ("paused", "failed", None)]

    # -- Hugging Face account and look-ups -------------------------------------------------------------------

    def _hf_service(self) -> HfService:
        hf = self.node.hf
        if hf is None:
            raise FeatureMissing("this node has no Hugging Face adapter attached")
        return hf

    async def hf_status(self) -> dict[str, Any]:
        return await self._hf_service().status()

    async def hf_login(self, token: str) -> dict[str, Any]:
        return await self._hf_service().login(token)

    async def hf_logout(self) -> None:
        await self._hf_service().logout()

    async def hf_catalog(self, search: str | None = None) -> list[dict[str, Any]]:
        return [m.to_json() for m in await self._hf_service().catalog(search)]

    async def hf_hardware(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return [r.to_json() for r in await self._hf_service().hardware(namespace)]

    # -- rented nodes ----------------------------------------------------------------------------------------

    def _manager(self) -> RentedManager:
        manager = self.node.rented
        if manager is None:
            raise FeatureMissing("this node has no rented-node manager attached")
        return manager

    def _ops(self) -> HfRented:
        """The Hugging Face rented operations (plan, create, pause, resume, delete), when attached."""
        ops = self.node.hf_rented
        if ops is None:
            raise FeatureMissing("this node has no Hugging Face rented operations attached")
        return ops

    async def rented_attach(self, decl: dict[str, Any], token: str | None) -> dict[str, Any]:
        return await self._manager().attach(decl, token)

    async def rented_set(self, name: str, changes: dict[str, Any]) -> dict[str, Any]:
        return await self._manager().set(name, changes)

    async def rented_detach(self, name: str) -> None:
        await self._manager().detach(name)

    async def rented_plan(self, params: dict[str, Any]) -> dict[str, Any]:
        """What ``rented_create(params)`` would do: price, GPU, what the budget allows (nothing rented yet)."""
        return await self._ops().plan(params)

    async def rented_create(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._ops().create(params)

    # -- batch windows (Hugging Face Jobs) --------------------------------------------------------------------

    def _windows(self) -> HfJobs:
        ops = self.node.hf_jobs
        if ops is None:
            raise FeatureMissing("this node has no batch-window operations attached")
        return ops

    async def hf_job_flavors(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in await self._windows().flavors()]

    async def window_plan(self, params: dict[str, Any]) -> dict[str, Any]:
        """What ``window_create(params)`` would start: the whole window's cost against the caps (refused if
        they cannot pay for it)."""
        return await self._windows().plan(params)

    async def window_create(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._windows().create(params)

    async def rented_pause(self, name: str) -> dict[str, Any]:
        return await self._ops().pause(name)

    async def rented_resume(self, name: str) -> dict[str, Any]:
        return await self._ops().resume(name)

    async def rented_delete(self, name: str) -> None:
        await self._ops().delete(name)

    # -- requesters: keys, the LAN door, spend by requester ---------------------------------------------------

    def _requesters(self) -> RequesterService:
        service = self.node.requesters
        if service is None:
            raise FeatureMissing("this node has no keys or LAN door attached")
        return service

    def requesters_summary(self) -> dict[str, Any] | None:
        """``{"lan_on", "keys", "text": "LAN access on · 2 keys"}``, or None without the feature."""
        service = self.node.requesters
        return service.summary() if service is not None else None

    def keys(self) -> list[dict[str, Any]]:
        service = self.node.requesters
        return service.list_keys() if service is not None else []

    async def key_create(self, name: str, *, models: list[str] | None = None, off_lan: str = "allow",
                         usd_per_day: float | None = None, requests_per_min: int | None = None) -> dict[str, Any]:
        """The new key's record with ``key``: the only time the key itself is seen."""
        return self._requesters().create_key(name, models=models, off_lan=off_lan, usd_per_day=usd_per_day,
                                             requests_per_min=requests_per_min)

    async def key_revoke(self, name: str) -> dict[str, Any]:
        return self._requesters().revoke_key(name)

    def lan_status(self) -> dict[str, Any] | None:
        service = self.node.requesters
        return service.lan_status() if service is not None else None

    async def set_lan(self, listen: str | None) -> dict[str, Any]:
        return await self._requesters().set_lan(listen)

    def rented_today(self, name: str) -> list[dict[str, Any]]:
        """Spend today on one of this node's rented nodes, by requesting node."""
        service = self.node.requesters
        return service.today(name) if service is not None else []

    # -- settings, engines, cluster --------------------------------------------------------------------------

    async def set_off_lan(self, policy: str) -> None:
        settings = self.node.settings
        settings.off_lan = _off_lan(policy)
        self.node.settings_store.save(settings)
        self.node.bus.publish(NodeChanged(node=self.node.name, reason=f"off-LAN routing {policy}"))

    async def engine_add(self, data: dict[str, Any], token: str | None) -> dict[str, Any]:
        return await self.node.engines.add(data, token)

    async def engine_remove(self, name: str) -> None:
        await self.node.engines.remove(name)

    def _cluster(self) -> ClusterService:
        cluster = self.node.cluster
        if cluster is None:
            raise FeatureMissing("this node has no cluster attached (pairing needs it)")
        return cluster

    def cluster_available(self) -> bool:
        return self.node.cluster is not None

    def peers(self) -> list[dict[str, Any]]:
        cluster = self.node.cluster
        if cluster is None:
            return []
        return list(cluster.peers.peer_rows())

    async def pair_invite(self, ttl_s: float = 300.0) -> dict[str, Any]:
        """A new PIN; the pairing port stays open until a node joins, the PIN expires or it is cancelled."""
        made = await self._cluster().require_pairing().invite(ttl_s)
        return {"pin": made.pin, "address": made.address, "expires_at": made.expires_at.timestamp()}

    async def pair_wait(self, timeout_s: float | None = None) -> dict[str, Any]:
        pin = await self._cluster().require_pairing().wait(timeout_s)
        return _pin_row(pin)

    async def pair_cancel(self) -> None:
        await self._cluster().require_pairing().cancel()

    async def pair_join(self, address: str, pin: str) -> dict[str, Any]:
        return _pin_row(await self._cluster().require_pairing().join(address, pin))

    async def unpair(self, node_id: str) -> dict[str, Any]:
        return await self._cluster().membership.remove(node_id)

    # -- first run -------------------------------------------------------------------------------------------

    async def discover_engines(self, ports: list[int] | None = None) -> list[FoundEngine]:
        """One look at loopback for engines not adopted yet (this node's front door left out)."""
        found = await discover(ports, skip_urls=[f"http://{self.node.frontdoor_address}"]
                               if self.node.frontdoor_address else [])
        return not_adopted(found, self.node.engines)

    async def adopt_engines(self, found: list[FoundEngine]) -> list[dict[str, Any]]:
        return await adopt(self.node.engines, found)

    def frontdoor_open(self) -> bool:
        return self.node.frontdoor_open

    def frontdoor_free(self) -> bool:
        return frontdoor_free(self.node)

    async def open_frontdoor(self) -> None:
        await self.node.open_frontdoor()

    def welcomed(self) -> bool:
        return welcomed(self.node.home)

    def mark_welcomed(self) -> None:
        mark_welcomed(self.node.home)

    # -- lifecycle -------------------------------------------------------------------------------------------

    def watch_pause_on_exit(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(rented node name)`` as pause-on-exit reaches each node (a documented
        ``on_sponsor_exit`` hook that only reports); returns a function that removes it."""
        manager = self.node.rented
        if manager is None:
            return lambda: None
        hooks = manager.hooks.on_sponsor_exit

        async def report(node: RentedUpstream) -> None:
            callback(node.name)

        hooks.insert(0, report)
        return lambda: hooks.remove(report) if report in hooks else None

    async def stop(self, progress: Callable[[str], None] | None = None) -> None:
        """The node's own stop (pause-on-exit first); ``progress(label)`` before each first step."""
        if progress is not None:
            self.node.stop_first[:] = [(label, _announced(label, hook, progress))
                                       for label, hook in self.node.stop_first]
        await self.node.stop()


def _announced(label: str, hook: Callable[[], Awaitable[None]],
               progress: Callable[[str], None]) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        progress(label)
        await hook()

    return run
