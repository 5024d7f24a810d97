"""``ClusterApi``: pairing (invite, wait, join, cancel, unpair) and peers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.services.api.snapshots import InviteRow, PinRow
from app.services.cluster.pairing_protocol import PairingError
from app.services.cluster.peers import normalize_address
from app.services.errors import FeatureMissing

if TYPE_CHECKING:
    from app.services.cluster.service import ClusterService
    from app.services.cluster.trust import PeerPin
    from app.services.node import Node


def pin_row(pin: PeerPin) -> PinRow:
    return {"id": pin.node_id, "name": pin.name, "address": pin.address, "fingerprint": pin.fingerprint,
            "paired_at": pin.paired_at.isoformat()}


class ClusterApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    def _cluster(self) -> ClusterService:
        if self.node.cluster is None:
            raise FeatureMissing("this node has no cluster attached (pairing needs it)")
        return self.node.cluster

    @property
    def available(self) -> bool:
        return self.node.cluster is not None

    def peers(self) -> list[dict[str, Any]]:
        cluster = self.node.cluster
        return list(cluster.peers.peer_rows()) if cluster is not None else []

    def manual_peers(self) -> list[str]:
        return list(self._cluster().peers.manual)

    def pairs(self) -> dict[str, Any]:
        """Paired peers, and removals this node still has to tell a peer about."""
        cluster = self._cluster()
        return {"peers": cluster.peers.peer_rows(), "pending_notices": [pin_row(p) for p in cluster.membership.pending]}

    async def invite(self, ttl_s: float = 300.0) -> InviteRow:
        """A new PIN; the pairing port stays open until a node joins, the PIN expires or it is cancelled."""
        made = await self._cluster().require_pairing().invite(ttl_s)
        return {"pin": made.pin, "address": made.address, "expires_at": made.expires_at.isoformat(),
                "expires_at_unix": made.expires_at.timestamp()}

    def invite_status(self) -> dict[str, Any]:
        return self._cluster().require_pairing().status()

    async def cancel(self) -> dict[str, Any]:
        pairing = self._cluster().require_pairing()
        await pairing.cancel()
        return pairing.status()

    async def wait(self, timeout_s: float | None = None) -> PinRow:
        """The peer that joined the open invite (raises PairingError if none did within ``timeout_s``)."""
        try:
            pin = await self._cluster().require_pairing().wait(timeout_s)
        except TimeoutError as exc:
            raise PairingError(f"no node joined within {timeout_s:g} s; the invite is still pending") from exc
        return pin_row(pin)

    async def join(self, address: str, pin: str) -> PinRow:
        return pin_row(await self._cluster().require_pairing().join(address, pin))

    async def unpair(self, node_id: str) -> dict[str, Any]:
        return await self._cluster().membership.remove(node_id)

    async def add_peer(self, address: str) -> dict[str, Any]:
        """Poll a paired node at HOST:PORT (where mDNS cannot find it); ``found`` is its row once it answers."""
        cluster = self._cluster()
        normalized = normalize_address(address)
        peer = await cluster.peers.add_address(normalized)
        found = None
        if peer is not None:
            found = next((row for row in cluster.peers.peer_rows() if row["id"] == peer.node_id), None)
        return {"found": found, "address": normalized}
