"""``attach_rented(node)``: gives a node its rented nodes (called once in bootstrap.build_node).

Wires the ``RentedManager`` into the node's extension points: start hook (load and probe),
stop-first hook (pause on sponsor exit, while the network is still up), stop-last hook,
``fact_providers`` (rows for ``pairwise nodes``), ``shared_fact_providers`` (what peers may
see), the one poll -> bill -> cap loop of polled providers (provider_loop.py), providers named by
``PAIRWISE_PROVIDERS`` (``module:Class``, for development and tests), and a registry source of peers' unshared rented nodes
(``peer_view``) so a request for a model only such a node serves is refused by name. The
bootstrap keeps the manager in ``node.rented``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.environment import environment
from app.services.rented.manager import RentedManager
from app.services.rented.meter import CostMeter
from app.services.rented.operations import Offers
from app.services.rented.peer_view import PeerRentedViews
from app.services.rented.provider_loop import ProviderLoop
from app.services.rented.spend import FILE_NAME as SPEND_FILE
from app.services.rented.spend import spend_dir
from app.services.rented.store import RentedStore

if TYPE_CHECKING:
    from app.services.backends.base import Upstream
    from app.services.node import Node



def attach_rented(node: Node) -> RentedManager:
    manager = RentedManager(
        store=RentedStore.of(node.home), secrets=node.secrets, registry=node.registry, bus=node.bus,
        sponsor_name=node.name, sponsor_id=node.node_id, extra_ca=node.extra_ca,
        # Spend accounts are shared by every home of the user (spend.py); the home's own per-name
        # totals from before are taken into them once.
        meter=CostMeter(spend_dir() / SPEND_FILE, legacy=node.home.rented_meter_file,
                        marker=node.home.root / "spend_account.json"), jobs=node.jobs,
        replicators=node.tracker.replicators,
    )
    # Providers from outside the app (development and tests: docs/adding-a-provider.md).
    plugins = environment().text("PAIRWISE_PROVIDERS")
    if plugins:
        for provider in manager.providers.load(plugins):
            if isinstance(provider, Offers):
                provider.offer(manager)  # its create operations, where the service API finds them
    loop = ProviderLoop(manager, node.bus)  # polls, bills and caps the nodes of every provider that ``polls``
    node.start_hooks.append(manager.start)
    node.start_hooks.append(loop.start)
    node.stop_last.append(loop.stop)
    node.stop_first.append(("rented: pause on sponsor exit", manager.on_sponsor_exit))
    node.stop_last.append(manager.stop)
    node.fact_providers.append(manager.node_rows)
    node.shared_fact_providers.append(manager.shared_facts)
    # Peers' rented nodes, routed under their own policy (unshared ones refused by name).
    node.registry.add_dynamic(PeerRentedViews(node.node_id, node.peer_rented_providers,
                                              lambda sid: _sponsor_upstream(node, sid)))
    return manager


def _sponsor_upstream(node: Node, sponsor_id: str) -> Upstream | None:
    """The online peer upstream of a rented node's sponsor (the cluster may not be attached)."""
    peer = node.cluster.peers.peers.get(sponsor_id) if node.cluster is not None else None
    return peer.upstream if peer is not None and peer.online else None
