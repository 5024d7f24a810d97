"""What the cluster reads of a node, as Protocols, one per part that takes the node: the cluster
never names ``Node``, so the node (whose ``cluster`` field holds it) and the cluster do not import
each other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from app.home import Home
    from app.services.api.rows import RentedFact
    from app.services.backends.engines import EngineManager
    from app.services.cluster.identity import NodeIdentity
    from app.services.events import EventBus
    from app.services.inference import InferenceService
    from app.services.jobs.store import JobStore
    from app.services.jobs.tracker import JobTracker
    from app.services.listener_budget import BudgetedSite
    from app.services.platform.hardware import HardwareFacts
    from app.services.routing.registry import UpstreamRegistry
    from app.settings import NodeSettings


class FactsNode(Protocol):
    """facts.py: what peers may learn (shareable upstreams, engines, shared rented rows)."""

    name: str
    node_id: str
    registry: UpstreamRegistry
    engines: EngineManager
    shared_fact_providers: list[Callable[[], Sequence[RentedFact]]]


class RelayNode(FactsNode, Protocol):
    """relay.py: a peer's request run here, among the upstreams peers may use."""

    settings: NodeSettings
    inference: InferenceService
    jobs: JobStore

    async def refresh_stale(self) -> None: ...


class ReplicaNode(Protocol):
    """replication.py: shared workload records."""

    node_id: str
    bus: EventBus
    jobs: JobStore
    tracker: JobTracker


class ClusterNode(RelayNode, ReplicaNode, Protocol):
    """service.py: all of the above, and the home, identity and listeners of the cluster port."""

    home: Home
    identity: NodeIdentity
    listener_sites: list[BudgetedSite]
    hardware: HardwareFacts | None

    def write_runtime(self, **extra: object) -> None: ...
