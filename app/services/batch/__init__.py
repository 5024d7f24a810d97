"""Batches: the OpenAI Files and Batch APIs over the whole cluster (issue 30).

A batch's lines are spread over every copy of their model (local engines, peers, rented nodes by
their policies), each copy kept at its share of its capacity and below interactive requests,
durable across a crash, within a deadline and a budget. ``attach_batch(node)`` gives a node the
loopback front door's ``/v1/files`` and ``/v1/batches`` (``routes.py``; not the LAN door's: a batch
holds its prompts and answers, and a LAN key would see every batch of the node) and resumes its
batches at start.
"""

from __future__ import annotations

from app.services.batch.context import AttachNode
from app.services.batch.routes import door_routes
from app.services.batch.service import BatchService


def attach_batch(node: AttachNode) -> BatchService:
    service = BatchService(node)
    node.extra_door_routes.extend(door_routes(node, service))
    node.start_hooks.append(service.start)
    # First of all on stop: no batch line starts while rented nodes are being paused.
    node.stop_first.insert(0, ("Stopping batches", service.stop))

    async def close() -> None:
        service.close()

    node.stop_last.append(close)
    return service
