"""``RequesterService``: a node's keys, per-requester limits and LAN door, behind one set of
methods the control API and the tray both call.

Public API: ``keys`` (``KeyStore``), ``limits`` (``RequesterLimits``), ``lan`` (``LanDoor``);
``create_key(name, models=, off_lan=, usd_per_day=, requests_per_min=) -> {"key", ...record}``
(the only time the key itself is seen), ``revoke_key(name)``, ``list_keys()``,
``await set_lan(listen | None)``, ``lan_status()``, ``door_cert() -> {"pem", "fingerprint"}``,
``today(rented_name)``, ``summary()`` (for the tray: "LAN access on · 2 keys").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.home import NotSaved
from app.services.errors import ConfigError
from app.services.events import RequestersChanged
from app.services.keys.lan import LanDoor
from app.services.keys.limits import RequesterLimits
from app.services.keys.store import KeyStore
from app.settings import NodeSettings, parse_host_port

if TYPE_CHECKING:
    from app.services.api.snapshots import (
        DoorCert,
        KeyListRow,
        KeyRow,
        LanStatus,
        NewKeyRow,
        RequestersSummary,
        SpendTodayRow,
    )
    from app.services.keys.context import KeysNode

log = logging.getLogger(__name__)
KEYS_FILE = "keys.json"


class RequesterService:
    def __init__(self, node: KeysNode) -> None:
        self.node = node
        self.keys = KeyStore(node.home.root / KEYS_FILE)
        self.limits = RequesterLimits(node.node_id, node.name, self.keys, node.bus)
        self.lan = LanDoor(node, self.keys)

    async def start(self) -> None:
        self.limits.load(self.node.jobs)
        if self.node.settings.lan_listen:
            try:
                await self.lan.start(self.node.settings.lan_listen)
            except ConfigError as exc:
                # The node still serves this machine and the cluster; the door's trouble is said aloud.
                self.lan.error = exc.message
                log.warning("%s", exc.message)
                self._changed(exc.message)
                return
            self._changed("LAN door opened")

    async def stop(self) -> None:
        await self.lan.stop()
        self.limits.stop()

    def _changed(self, reason: str) -> None:
        summary = self.summary()
        self.node.bus.publish(RequestersChanged(reason=reason, lan_on=summary["lan_on"], keys=summary["keys"],
                                                text=summary["text"]))

    # -- keys ------------------------------------------------------------------------------------------------

    def create_key(self, name: str, *, models: list[str] | None = None, off_lan: str = "allow",
                   usd_per_day: float | None = None, requests_per_min: int | None = None) -> NewKeyRow:
        record, key = self.keys.create(name, models=models, off_lan=off_lan, usd_per_day=usd_per_day,
                                       requests_per_min=requests_per_min)
        self._changed(f"key {name} created")
        return {**record.public_json(), "key": key}

    def revoke_key(self, name: str) -> KeyRow:
        record = self.keys.revoke(name)
        self._changed(f"key {name} revoked")
        return record.public_json()

    def list_keys(self) -> list[KeyListRow]:
        return [{**r.public_json(), "usd_today": round(self.limits.key_spend_today(r.name), 6)}
                for r in self.keys.list()]

    # -- the LAN door ----------------------------------------------------------------------------------------

    async def set_lan(self, listen: str | None) -> LanStatus:
        """Open the LAN door on ``listen`` (HOST:PORT), or close it (None); remembered in settings."""
        if listen:
            parse_host_port(listen)
            await self.lan.start(listen)
        was = self.node.settings.lan_listen

        def remember(settings: NodeSettings) -> None:
            settings.lan_listen = listen or None

        try:
            self.node.settings_store.change(self.node.settings, remember, "the LAN door setting")
        except NotSaved:
            if listen:  # not saved, so not in force: the door goes back to what was saved
                await (self.lan.start(was) if was else self.lan.stop())
            raise
        if not listen:
            await self.lan.stop()
        self._changed("LAN door opened" if listen else "LAN door closed")
        return self.lan_status()

    def lan_status(self) -> LanStatus:
        return self.lan.status()

    def door_cert(self) -> DoorCert:
        return self.lan.pin()

    # -- views -----------------------------------------------------------------------------------------------

    def today(self, rented_name: str) -> list[SpendTodayRow]:
        return self.limits.today(rented_name)

    def summary(self) -> RequestersSummary:
        keys = self.keys.count_active()
        lan = "LAN access on" if self.lan.on else "LAN access off"
        return {"lan_on": self.lan.on, "keys": keys, "text": f"{lan} · {keys} key{'s' if keys != 1 else ''}"}
