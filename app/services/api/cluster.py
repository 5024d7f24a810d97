"""``ClusterApi``: pairing (invite, wait, join, cancel, unpair) and peers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.api.rows import RelayedRentedFact, is_relayed
from app.services.api.snapshots import (
    AddedPeerRow,
    InviteRow,
    InviteStatus,
    PairsRow,
    PeerRentedRow,
    PeerRow,
    PinRow,
    UnpairedRow,
)
from app.services.cluster.pairing_protocol import PairingError
from app.services.cluster.peers import normalize_address
from app.services.errors import ConfigError, FeatureMissing, NotFound
from app.settings import PEER_RENTED_POLICIES, NodeSettings

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

    def peers(self) -> list[PeerRow]:
        cluster = self.node.cluster
        return list(cluster.peers.peer_rows()) if cluster is not None else []

    def manual_peers(self) -> list[str]:
        return list(self._cluster().peers.manual)

    def pairs(self) -> PairsRow:
        """Paired peers, and removals this node still has to tell a peer about."""
        cluster = self._cluster()
        return {"peers": cluster.peers.peer_rows(), "pending_notices": [pin_row(p) for p in cluster.membership.pending]}

    async def invite(self, ttl_s: float = 300.0) -> InviteRow:
        """A new PIN; the pairing port stays open until a node joins, the PIN expires or it is cancelled."""
        made = await self._cluster().require_pairing().invite(ttl_s)
        return {"pin": made.pin, "address": made.address, "expires_at": made.expires_at.isoformat(),
                "expires_at_unix": made.expires_at.timestamp()}

    def invite_status(self) -> InviteStatus:
        return self._cluster().require_pairing().status()

    async def cancel(self) -> InviteStatus:
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

    async def unpair(self, node_id: str) -> UnpairedRow:
        return await self._cluster().membership.remove(node_id)

    async def add_peer(self, address: str) -> AddedPeerRow:
        """Poll a paired node at HOST:PORT (where mDNS cannot find it); ``found`` is its row once it answers."""
        cluster = self._cluster()
        normalized = normalize_address(address)
        peer = await cluster.peers.add_address(normalized)
        found = None
        if peer is not None:
            found = next((row for row in cluster.peers.peer_rows() if row["id"] == peer.node_id), None)
        return {"found": found, "address": normalized}

    # -- this node's policy for peers' rented nodes ----------------------------------------------------

    def peer_rented(self) -> list[PeerRentedRow]:
        """Each peer's shared rented node with the policy this node routes to it under (and what
        its sponsor asked for, shown only), plus any rule kept for a node not seen now."""
        settings = self.node.settings
        seen = self._peer_rented_rows()
        rows: list[PeerRentedRow] = [
            {"id": r["id"], "name": r.get("name"), "via": r["via"], "policy": settings.peer_rented_policy(r["id"]),
             "sponsor_policy": r.get("sponsor_policy"), "set": r["id"] in settings.peer_rented} for r in seen]
        shown = {r["id"] for r in rows}
        rows += [{"id": node_id, "name": None, "via": None, "policy": policy, "sponsor_policy": None, "set": True}
                 for node_id, policy in settings.peer_rented.items() if node_id not in shown]
        return rows

    def _peer_rented_rows(self) -> list[RelayedRentedFact]:
        """The rented nodes peers share (relayed, marked ``via``), each with the id a rule is kept under."""
        cluster = self.node.cluster
        rows = cluster.peers.rows() if cluster is not None else []
        return [r for r in rows if is_relayed(r) and isinstance(r.get("id"), str)]

    async def set_peer_rented(self, ref: str, policy: str) -> list[PeerRentedRow]:
        """``settings peer-rented NODE --use POLICY``: how this node routes to a peer's rented node
        (``default`` forgets the rule: when-no-local-node). Saved before it takes effect."""
        if policy != "default" and policy not in PEER_RENTED_POLICIES:
            raise ConfigError(f"the policy must be one of {', '.join(PEER_RENTED_POLICIES)} or default, not {policy!r}")
        ref = ref.strip()
        matches = [r for r in self._peer_rented_rows() if ref in (r["id"], r.get("name"))]
        ids = {r["id"] for r in matches} or ({ref} if ref in self.node.settings.peer_rented else set())
        if not ids:
            known = ", ".join(sorted(f"{r.get('name')} (via {r.get('via')})" for r in self._peer_rented_rows()))
            raise NotFound(f"no peer shares a rented node named {ref!r}" + (f"; peers share: {known}" if known else
                                                                           "; no peer shares a rented node now"))
        if len(ids) > 1:
            raise ConfigError(f"{ref!r} could mean several rented nodes ({', '.join(sorted(ids))}); give the id")
        node_id = ids.pop()

        def apply(settings: NodeSettings) -> None:
            if policy == "default":
                settings.peer_rented.pop(node_id, None)
            else:
                settings.peer_rented[node_id] = policy  # type: ignore[assignment]

        self.node.settings_store.change(self.node.settings, apply, f"the policy for rented node {ref}")
        return self.peer_rented()
