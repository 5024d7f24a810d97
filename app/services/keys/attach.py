"""``attach_requesters(node)``: gives a node keys, per-requester limits and the LAN door
(called once in ``bootstrap.build_node``).

Wires the ``RequesterService`` into the node: the optional-key check on the loopback front door,
the limits gate before every rented candidate, a start hook (today's spend from history; the LAN
door if ``lan_listen`` is set), a stop-last hook (closes the LAN door) and the control routes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.keys.auth import optional_key
from app.services.keys.routes import control_routes
from app.services.keys.service import RequesterService

if TYPE_CHECKING:
    from app.services.node import Node


def attach_requesters(node: Node) -> RequesterService:
    service = RequesterService(node)
    node.door_checks.append(optional_key(service.keys))
    node.inference.gates.append(service.limits.gate)
    node.start_hooks.append(service.start)
    node.stop_last.append(service.stop)
    node.extra_control_routes.extend(control_routes(service))
    return service
