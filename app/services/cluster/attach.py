"""``attach_cluster(node)``: makes a node a cluster member.

Adds the cluster service's start and stop hooks, peers as a dynamic source
of upstreams and peer rows for ``pairwise nodes``. Pairing and peers are
actions of the service API (``app.services.api.cluster``, routes in
``app.services.api.routes_features``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.cluster.service import ClusterService

if TYPE_CHECKING:
    from app.services.node import Node


def attach_cluster(node: Node) -> ClusterService:
    cluster = ClusterService(node)
    node.start_hooks.append(cluster.start)
    node.stop_last.append(cluster.stop)
    node.registry.add_dynamic(cluster.peers.upstreams)
    node.fact_providers.append(cluster.peers.rows)
    node.peer_rented_providers.append(cluster.peers.shared_rows)
    return cluster
