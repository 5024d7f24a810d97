"""What the front door reads of a node, as a Protocol: the door never names ``Node``, so the node
(which opens the door) and the door do not import each other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from app.services.frontdoor.control import ControlNode, ControlRoute
from app.services.keys.auth import CallerNode, Middleware

if TYPE_CHECKING:
    from app.services.backends.engines import EngineManager
    from app.services.inference import InferenceService
    from app.services.routing.registry import UpstreamRegistry


class DoorNode(CallerNode, ControlNode, Protocol):
    inference: InferenceService
    engines: EngineManager  # the management routes name this node's engines
    registry: UpstreamRegistry
    door_checks: list[Middleware]  # run after the loopback rule (the keys feature's optional key)
    extra_door_routes: list[ControlRoute]  # a feature's API routes at the loopback door (/v1/batches)

    async def refresh_stale(self) -> None: ...
