"""``attach_requesters(node)``: gives a node keys, per-requester limits and the LAN door
(called once in ``bootstrap.build_node``).

Wires the ``RequesterService`` into the node: the optional-key check on the loopback front door,
the limits gate before every rented candidate, a start hook (today's spend from history; the LAN
door if ``lan_listen`` is set) and a stop-last hook (closes the LAN door). Its actions are the service
API's (``app.services.api.keys``, routes in ``app.services.api.routes_keys``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.keys.auth import optional_key
from app.services.keys.service import RequesterService

if TYPE_CHECKING:
    from app.services.node import Node


def attach_requesters(node: Node) -> RequesterService:
    service = RequesterService(node)
    node.door_checks.append(optional_key(service.keys))
    node.inference.gates.append(service.limits.gate)
    node.start_hooks.append(service.start)
    node.stop_last.append(service.stop)
    return service
