"""``FirstRunApi``: what the welcome window does on a first start (engines found on loopback, the
front door's port, whether this home was greeted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.api.snapshots import EngineRow
from app.services.firstrun.adopt import adopt, mark_welcomed, welcomed
from app.services.firstrun.discover import FoundEngine
from app.services.firstrun.offer import offers
from app.services.firstrun.ports import frontdoor_free

if TYPE_CHECKING:
    from app.services.node import Node


class FirstRunApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    async def discover_engines(self, ports: list[int] | None = None) -> list[FoundEngine]:
        """One look at loopback for engines not adopted yet (this node's front door left out)."""
        return await offers(self.node, ports)

    async def adopt_engines(self, found: list[FoundEngine]) -> list[EngineRow]:
        return await adopt(self.node.engines, found)

    def front_door_listen(self) -> str:
        """Where the front door is set to listen (HOST:PORT), open or not yet."""
        return self.node.settings.listen

    def front_door_address(self) -> str:
        """Where it answers now ("" until it is open)."""
        return self.node.frontdoor_address

    def frontdoor_open(self) -> bool:
        return self.node.frontdoor_open

    def frontdoor_free(self) -> bool:
        return frontdoor_free(self.node.settings)

    async def open_frontdoor(self) -> None:
        await self.node.open_frontdoor()

    def welcomed(self) -> bool:
        return welcomed(self.node.home)

    def mark_welcomed(self) -> None:
        mark_welcomed(self.node.home)
