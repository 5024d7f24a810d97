"""``NodeApi``: the node's own snapshots and actions (status, nodes, jobs, engines, settings, events,
stop), the feature APIs under it (``rented``, ``cluster``, ``keys``, ``first_run``, ``models``) and
each registered provider's part (``part(cls)``, ``parts``: see parts.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Literal, TypeVar

from app.services.api.batch import BatchApi
from app.services.api.changes import SettingsChange
from app.services.api.cluster import ClusterApi
from app.services.api.first_run import FirstRunApi
from app.services.api.keys import KeysApi
from app.services.api.models import ModelsApi
from app.services.api.parts import Part, parts_for
from app.services.api.rented import RentedApi
from app.services.api.rows import NodeRow, RentedActionRow
from app.services.api.snapshots import JobRow, NodeStatus, RemovedEngine, SettingsRow
from app.services.errors import ConfigError, FeatureMissing
from app.services.events import Event, NodeChanged
from app.services.node import Node
from app.services.upstream_facts import EngineFacts
from app.settings import NodeSettings

T = TypeVar("T")


class NodeApi:
    def __init__(self, node: Node) -> None:
        self.node = node
        self.rented = RentedApi(node)
        self.cluster = ClusterApi(node)
        self.keys = KeysApi(node)
        self.first_run = FirstRunApi(node)
        self.batches = BatchApi(node)
        self.models = ModelsApi(node)
        self.parts: list[Part] = parts_for(node, self.rented)

    def part(self, kind: type[T]) -> T:
        """The registered provider part of that type (``api.part(MyCloudApi)``)."""
        for part in self.parts:
            if isinstance(part.api, kind):
                return part.api
        raise FeatureMissing(f"this node's service API has no {kind.__name__}: its provider is not registered")

    # -- snapshots -------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def home(self) -> str:
        return str(self.node.home.root)

    @property
    def demo(self) -> bool:
        """This node is ``pairwise demo``'s (a simulated provider, its own home)."""
        return self.node.settings.demo

    def status(self) -> NodeStatus:
        return self.node.status()

    def nodes(self, *, own_detail: bool = False) -> list[NodeRow]:
        """Every node: this one, its rented nodes, peers and their shared rented nodes. With
        ``own_detail`` this node's rented rows carry what only the sponsor may see (costs, the
        provider's message, ``billing``/``pausable``/``resumable``), as the tray shows them."""
        rows = self.node.nodes()
        if not own_detail:
            return rows
        local = {r["name"]: r for r in self.rented.list()}
        return [self._own_detail(r, local) for r in rows]

    def _own_detail(self, row: NodeRow, local: dict[str, RentedActionRow]) -> NodeRow:
        """This node's own rented row in place of its shared fact (which it holds, in the same order)."""
        seen: Mapping[str, object] = row  # a peer's relayed row may lack any key
        name = seen.get("name")
        if seen.get("kind") == "rented" and name in local and seen.get("sponsor_id") == self.node.node_id:
            return local[name]
        return row

    def jobs(self, *, active_only: bool = False, limit: int = 200) -> list[JobRow]:
        """Workload records, newest first, each with ``requester_text`` (who asked, as one line)."""
        return [j.row() for j in self.node.jobs.list(active_only=active_only, limit=limit)]

    # -- engines ---------------------------------------------------------------------------------------------

    def engines(self) -> list[EngineFacts]:
        return self.node.engines.describe()

    async def engine_add(self, data: Mapping[str, object], token: str | None) -> EngineFacts:
        return await self.node.engines.add(dict(data), token)

    async def engine_remove(self, name: str) -> RemovedEngine:
        await self.node.engines.remove(name)
        return {"removed": name}

    # -- settings --------------------------------------------------------------------------------------------

    def settings(self) -> SettingsRow:
        """The settings a person changes at run time (``pairwise settings``, the Settings view)."""
        return {"off_lan": self.node.settings.off_lan}

    def off_lan_policy(self) -> str:
        return self.node.settings.off_lan

    async def change_settings(self, change: SettingsChange) -> SettingsRow:
        """``PATCH /settings``, ``pairwise settings ...`` and the Settings view: each setting given is
        checked, then all are saved at once (or none), then they take effect."""
        if change.off_lan is not None:
            await self.set_off_lan(change.off_lan)
        return self.settings()

    async def set_off_lan(self, policy: str) -> SettingsRow:
        """allow | deny: whether prompts that start on this node may be served off the LAN (rented nodes)."""
        chosen = _off_lan(policy)

        def apply(settings: NodeSettings) -> None:
            settings.off_lan = chosen

        # Saved first: a change the disk refuses is refused, and the node keeps routing as it did.
        self.node.settings_store.change(self.node.settings, apply, f"off-LAN routing {chosen}")
        self.node.bus.publish(NodeChanged(node=self.node.name, reason=f"off-LAN routing {policy}"))
        return self.settings()

    # -- events and stopping ---------------------------------------------------------------------------------

    def on_event(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback`` for every event (on the loop's thread); returns the unsubscribe function."""
        return self.node.bus.on(callback)

    def subscribe(self) -> asyncio.Queue[Event]:
        return self.node.bus.subscribe()

    def unsubscribe(self, queue: asyncio.Queue[Event]) -> None:
        self.node.bus.unsubscribe(queue)

    @property
    def stopping(self) -> asyncio.Event:
        return self.node.stopping

    async def stop(self, progress: Callable[[str], None] | None = None) -> None:
        """The node's own stop (pause-on-exit first); ``progress(label)`` before each first step.
        Each rented node pause-on-exit reaches is told as a ``PausingOnExit`` event."""
        await self.node.stop(progress=progress)


def _off_lan(policy: str) -> Literal["allow", "deny"]:
    if policy == "allow":
        return "allow"
    if policy == "deny":
        return "deny"
    raise ConfigError(f"off-LAN policy must be allow or deny, not {policy!r}")
