"""What the keys feature reads of a node, as Protocols: the feature never names ``Node``, so the
node (whose ``requesters`` field holds the feature) and the feature do not import each other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from app.services.frontdoor.context import DoorNode

if TYPE_CHECKING:
    from app.services.cluster.identity import NodeIdentity
    from app.services.events import EventBus
    from app.services.jobs.store import JobStore
    from app.services.listener_budget import BudgetedSite
    from app.settings import SettingsStore


class LanNode(DoorNode, Protocol):
    """The LAN door: the front door's routes, under the node's certificate, counted among its listeners."""

    identity: NodeIdentity
    listener_sites: list[BudgetedSite]
    open_files: int


class KeysNode(LanNode, Protocol):
    """``RequesterService``: the LAN door, and the bus, jobs and settings it keeps limits and switches in."""

    bus: EventBus
    jobs: JobStore
    settings_store: SettingsStore
