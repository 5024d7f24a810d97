"""Leaving each other: ``pairwise pair remove NODE`` and its other side.

Removing a peer tells it first (POST /unpair over the still-pinned
connection), so it stops trusting us too, then drops its pin here. If the
peer cannot be reached, the pin is dropped anyway (this node stops trusting
it at once) and the notice is kept, with the peer's certificate, to be
delivered when it can be reached: our client can still prove who we are to a
node that still pins us, even though we no longer accept it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from app.home import write_private
from app.services.cluster.identity import NodeIdentity
from app.services.cluster.peer_client import PeerClient, PeerError
from app.services.cluster.peers import PeerManager
from app.services.cluster.trust import PeerPin, TrustStore, TrustStoreError
from app.services.errors import NotFound
from app.services.events import EventBus, PeerUnpaired

if TYPE_CHECKING:
    from app.services.api.snapshots import UnpairedRow

log = logging.getLogger(__name__)


class Membership:
    def __init__(self, identity: NodeIdentity, trust: TrustStore, peers: PeerManager, bus: EventBus,
                 pending_file: Path) -> None:
        self.identity, self.trust, self.peers, self.bus = identity, trust, peers, bus
        self._file = pending_file  # Home.unpair_pending_file
        self.pending: list[PeerPin] = self._load()
        self.retry_s = max(1.0, 5 * peers.poll_s)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._retry_loop(), name="unpair-notices")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def remove(self, ref: str) -> UnpairedRow:
        peer = self.peers.find(ref)
        pin = peer.pin if peer is not None else self.trust.get(ref)
        if pin is None:
            raise NotFound(f"no paired node is called or has the id {ref!r} (see 'pairwise pair list')")
        told: str | None = None
        if peer is not None:
            try:
                await peer.client.call("POST", "/unpair", timeout_s=5.0)
            except PeerError as exc:
                told = exc.message
        else:
            told = "it was never reached since this node started"
        name = peer.name if peer is not None else pin.name
        self.trust.remove(pin.node_id)
        if told is None:
            other = f"{name} stopped trusting this node too"
        else:
            self._remember(pin)
            other = f"{name} could not be told now ({told}); it will be told when it can be reached"
        log.info("removed peer %s (%s): %s", name, pin.node_id, other)
        self.bus.publish(PeerUnpaired(node=name, node_id=pin.node_id, told=told is None))
        return {"removed": {"id": pin.node_id, "name": name}, "other_side_told": told is None, "other_side": other}

    def unpaired_by(self, pin: PeerPin) -> None:
        """The peer removed us: drop its pin here too."""
        self.trust.remove(pin.node_id)
        self._forget(pin.node_id)
        log.info("peer %s (%s) removed this node; its pin is gone here too", pin.name, pin.node_id)
        self.bus.publish(PeerUnpaired(node=pin.name, node_id=pin.node_id, by_peer=True))

    # -- notices not yet delivered ---------------------------------------------------------------------

    async def _retry_loop(self) -> None:
        while True:
            await asyncio.sleep(self.retry_s)
            await self.deliver_pending()

    async def deliver_pending(self) -> None:
        for pin in list(self.pending):
            if pin.node_id in self.trust:  # paired again since: the notice is obsolete
                self._forget(pin.node_id)
                continue
            client = PeerClient(self.identity, pin, self.peers.self_headers)
            try:
                await client.call("POST", "/unpair", timeout_s=5.0)
            except PeerError:
                continue
            finally:
                await client.aclose()
            log.info("told %s (%s) that it was removed", pin.name, pin.node_id)
            self._forget(pin.node_id)

    def _remember(self, pin: PeerPin) -> None:
        self.pending = [p for p in self.pending if p.node_id != pin.node_id] + [pin]
        self._save()

    def _forget(self, node_id: str) -> None:
        if any(p.node_id == node_id for p in self.pending):
            self.pending = [p for p in self.pending if p.node_id != node_id]
            self._save()

    def _load(self) -> list[PeerPin]:
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
            return [PeerPin.from_json(str(row["node_id"]), row) for row in data.get("pins", [])]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError, AttributeError, TrustStoreError) as exc:
            log.warning("ignoring unreadable %s: %s", self._file, exc)
            return []

    def _save(self) -> None:
        write_private(self._file, json.dumps({"pins": [p.to_json() for p in self.pending]}, indent=2).encode())
