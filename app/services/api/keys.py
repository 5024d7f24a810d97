"""``KeysApi``: named keys, the LAN door and spend by requester (the requesters feature)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from app.services.api.changes import NewKey
from app.services.api.snapshots import (
    DoorCert,
    KeyListRow,
    KeyRow,
    LanStatus,
    NewKeyRow,
    RequestersSummary,
    SpendTodayRow,
)
from app.services.errors import FeatureMissing
from app.services.keys.limits import today_text
from app.services.keys.peer_limits import parse_peer_values, peer_text, replacing, split_items

if TYPE_CHECKING:
    from app.services.keys.service import RequesterService
    from app.services.node import Node


# How the tray reads and writes per-peer limits and spend, the same way the CLI does.
__all__ = ["KeysApi", "NewKey", "parse_peer_values", "peer_text", "replacing", "split_items", "today_text"]




class KeysApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    def _service(self) -> RequesterService:
        if self.node.requesters is None:
            raise FeatureMissing("this node has no keys or LAN door attached")
        return self.node.requesters

    def summary(self) -> RequestersSummary | None:
        """``{"lan_on", "keys", "text": "LAN access on · 2 keys"}``, or None without the feature."""
        service = self.node.requesters
        return service.summary() if service is not None else None

    def list(self) -> list[KeyListRow]:
        service = self.node.requesters
        return service.list_keys() if service is not None else []

    def create(self, new: NewKey) -> NewKeyRow:
        """The new key's record with ``key``: the only time the key itself is seen."""
        return self._service().create_key(new.name, models=new.models, off_lan=new.off_lan,
                                          usd_per_day=new.usd_per_day, requests_per_min=new.requests_per_min)

    def revoke(self, name: str) -> KeyRow:
        return self._service().revoke_key(name)

    def lan_status(self) -> LanStatus | None:
        service = self.node.requesters
        return service.lan_status() if service is not None else None

    async def set_lan(self, listen: str | None) -> LanStatus:
        return await self._service().set_lan(listen)

    def door_cert(self) -> DoorCert:
        return self._service().door_cert()

    def today(self, rented: str) -> builtins.list[SpendTodayRow]:
        """Spend today on one of this node's rented nodes, by requesting node."""
        service = self.node.requesters
        return service.today(rented) if service is not None else []
