"""The cluster as one service of a node: trust, cluster port, peers, jobs, pairing, mDNS.

Start order matters: the cluster port is bound first (its real address goes
into runtime.json and into every pairing exchange), then the peers are
polled, then mDNS announces a port that already answers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from app.services.cluster.facts import LoadBook, facts_doc, inventory_doc
from app.services.cluster.membership import Membership
from app.services.cluster.pairing_service import PairingService
from app.services.cluster.peers import Peer, PeerManager
from app.services.cluster.relay import Relay
from app.services.cluster.replication import Replication
from app.services.cluster.server import ClusterHandlers, ClusterServer
from app.services.cluster.tls import TlsContexts
from app.services.cluster.trust import PeerPin, TrustStore
from app.services.errors import ConfigError
from app.services.guard import guarded
from app.services.platform.hardware import HardwareFacts, hardware_summary, probe_hardware
from app.settings import parse_host_port

if TYPE_CHECKING:
    from app.services.cluster.context import ClusterNode
    from app.services.cluster.discovery import Discovery

log = logging.getLogger(__name__)


class ClusterService:
    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        self.state_dir = node.home.cluster_dir
        self.state_dir.mkdir(mode=0o700, exist_ok=True)
        self.trust = TrustStore(node.home.trust_file)
        self.contexts = TlsContexts(node.identity, self.trust)
        # Sent with every call to a peer; the port is filled in once the cluster port is bound.
        self.self_headers = {"X-Pairwise-Name": node.name[:200], "X-Pairwise-Cluster-Port": ""}
        self.book = LoadBook()
        self.hardware: HardwareFacts | None = None
        self.peers = PeerManager(node.identity, self.trust, node.bus, self.self_headers, node.home.manual_peers_file,
                                 on_online=self._peer_online, on_silent=self._peer_silent,
                                 off_lan_allowed=lambda: node.settings.off_lan == "allow",
                                 rented_policy=lambda node_id: node.settings.peer_rented_policy(node_id))
        self.replication = Replication(node, self.peers)
        self.membership = Membership(node.identity, self.trust, self.peers, node.bus, node.home.unpair_pending_file)
        self.relay = Relay(node, self.book, self._name_of)
        handlers = ClusterHandlers(
            facts=self.facts, inventory=lambda: inventory_doc(node, self.book), relay=self.relay.handle,
            receive_jobs=self.replication.receive, unpair=self._unpaired_by, heard_from=self.peers.heard_from,
        )
        self.server = ClusterServer(self.contexts, handlers, max_body_bytes=node.settings.max_body_bytes)
        self.pairing: PairingService | None = None
        self.discovery: Discovery | None = None
        self._probe: asyncio.Task[None] | None = None
        self._mdns: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        settings = self.node.settings
        host, configured_port = parse_host_port(settings.cluster_listen)
        address = await self.server.start(settings.cluster_listen)
        self.self_headers["X-Pairwise-Cluster-Port"] = str(self.server.port)
        self.node.write_runtime(cluster=address)
        if self.server.site is not None:
            self.node.listener_sites.append(self.server.site)
        self.pairing = PairingService(self.node.identity, self.trust, self.node.bus, bind_host=host,
                                      cluster_port=configured_port, cluster_address=address)
        self._probe = asyncio.create_task(self._probe_hardware(), name="hardware-probe")
        self.peers.start()
        self.replication.start()
        self.membership.start()
        if settings.mdns:
            # zeroconf loads only when mDNS is on (a few MB the demo and mdns-off nodes never use).
            from app.services.cluster.discovery import Discovery

            # In the background: announcing takes a second or two of mDNS probing.
            self.discovery = Discovery(self.node.node_id, self.node.name, host, self.server.port, self.peers.offer)
            self._mdns = asyncio.create_task(self._start_mdns(self.discovery), name="mdns")

    async def _start_mdns(self, discovery: Discovery) -> None:
        # No multicast here (a VPN, a container): 'pairwise peers add HOST:PORT' still works.
        with guarded("mDNS (peers can still be added with 'pairwise peers add HOST:PORT')", log):
            await discovery.start()

    async def stop(self) -> None:
        steps: list[tuple[str, Awaitable[object] | None]] = [
            ("mdns", self.discovery.stop() if self.discovery else None),
            ("pairing", self.pairing.close() if self.pairing else None),
            ("unpair notices", self.membership.stop()),
            ("replication", self.replication.stop()),
            ("peers", self.peers.stop()),
            ("cluster port", self.server.stop()),
        ]
        for task in (self._probe, self._mdns):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        for label, step in steps:
            if step is None:
                continue
            with guarded(f"stopping the cluster's {label}", log):  # and keep stopping the rest
                await asyncio.wait_for(step, timeout=5)
        self.contexts.close()

    async def _probe_hardware(self) -> None:
        with guarded("the hardware probe", log):
            self.hardware = await probe_hardware()
            self.node.hardware = self.hardware

    # -- hooks -----------------------------------------------------------------------------------------

    def facts(self) -> dict[str, object]:
        if not self.hardware:
            self.hardware = hardware_summary()
        return facts_doc(self.node, self.book, self.hardware)

    def _name_of(self, node_id: str) -> str | None:
        peer = self.peers.peers.get(node_id)
        return peer.name if peer is not None else None

    def _peer_online(self, peer: Peer) -> None:
        self.replication.catch_up(peer)

    def _peer_silent(self, peer: Peer, silent_for: float) -> None:
        self.replication.fail_silent(peer, silent_for)

    async def _unpaired_by(self, pin: PeerPin) -> None:
        self.membership.unpaired_by(pin)

    def require_pairing(self) -> PairingService:
        if self.pairing is None:
            raise ConfigError("the cluster is not started yet")
        return self.pairing
