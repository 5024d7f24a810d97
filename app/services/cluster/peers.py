"""Paired peers as live cluster members: polled, online or offline, found again.

Each pinned peer gets its own poll loop (one slow or stopped peer never
delays the others): its inventory and load every ``PAIRWISE_PEER_POLL_S``
seconds (default 2), its facts when it comes online and every few polls.
Two failed polls in a row, or a relay that reached nothing at all, mark it
offline; its models leave the routing table until a poll reaches it again.

A peer whose address changed is found again three ways: mDNS (``offer``),
its own calls to us (``heard_from``: it names its cluster port and we see
its address), and addresses the user adds (``pairwise peers add``), tried
against every offline peer. A peer is re-addressed only while it is offline,
so a working address is never traded for a guess.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from app.environment import environment
from app.home import save_private
from app.services.cluster import peer_facts
from app.services.cluster.identity import NodeIdentity
from app.services.cluster.peer_client import PeerClient, PeerError
from app.services.cluster.peer_upstream import PeerUpstream
from app.services.cluster.trust import PeerPin, TrustStore
from app.services.errors import ConfigError
from app.services.events import EventBus, NodeChanged, PeerJoined, PeerLeft, PeerRemoved
from app.services.guard import FailureNotices, guarded
from app.services.json_types import JsonObject

if TYPE_CHECKING:
    from app.services.api.rows import NodeRow, RelayedRentedFact
    from app.services.api.snapshots import PeerRow
    from app.services.backends.base import Upstream

log = logging.getLogger(__name__)

OFFLINE_AFTER = 2  # failed polls in a row
FACTS_EVERY = 5  # polls between two facts refreshes
MANUAL_EVERY = 5  # polls between two tries of the manual addresses while offline


def env_seconds(name: str, default: float) -> float:
    return environment().seconds(name, default)


@dataclass
class Peer:
    pin: PeerPin
    client: PeerClient
    upstream: PeerUpstream
    online: bool = False
    facts: JsonObject = field(default_factory=dict)
    failures: int = 0
    polls: int = 0
    last_seen: float | None = None  # wall clock of the last contact, for display
    last_heard: float = field(default_factory=time.monotonic)
    silence_reported: bool = False
    last_error: str | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    task: asyncio.Task[None] | None = None

    @property
    def node_id(self) -> str:
        return self.pin.node_id

    @property
    def name(self) -> str:
        return self.upstream.node_name


class PeerManager:
    def __init__(self, identity: NodeIdentity, trust: TrustStore, bus: EventBus, self_headers: dict[str, str],
                 manual_file: Path, *, on_online: Callable[[Peer], None] | None = None,
                 on_silent: Callable[[Peer, float], None] | None = None,
                 off_lan_allowed: Callable[[], bool] = lambda: True,
                 rented_policy: Callable[[str], str] = lambda _node_id: "when-no-local-node") -> None:
        self.identity, self.trust, self.bus = identity, trust, bus
        self.rented_policy = rented_policy  # this node's policy for a peer's rented node, by its id
        self._tell = FailureNotices(bus.publish)
        self.self_headers = self_headers
        self.poll_s = env_seconds("PAIRWISE_PEER_POLL_S", 2.0)
        self.silent_s = env_seconds("PAIRWISE_PEER_SILENT_S", 60.0)
        self.timeout_s = max(2.0, 3 * self.poll_s)
        self.on_online, self.on_silent = on_online, on_silent
        self.off_lan_allowed = off_lan_allowed
        self.peers: dict[str, Peer] = {}
        self._manual_file = manual_file  # Home.manual_peers_file
        self.manual: list[str] = self._load_manual()
        self._running = False
        self._closing: set[asyncio.Task[object]] = set()

    # -- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> None:
        self._running = True
        self.trust.add_listener(self.sync)
        self.sync()

    async def stop(self) -> None:
        self._running = False
        self.trust.remove_listener(self.sync)
        peers, self.peers = list(self.peers.values()), {}
        for peer in peers:
            await self._drop(peer)
        await asyncio.gather(*self._closing, return_exceptions=True)

    def sync(self) -> None:
        """Follow the trust store: new pins get a peer, removed pins lose theirs."""
        if not self._running:
            return
        pins = {pin.node_id: pin for pin in self.trust.all()}
        for node_id in list(self.peers):
            peer = self.peers[node_id]
            pin = pins.get(node_id)
            if pin is None or pin.fingerprint != peer.pin.fingerprint:
                del self.peers[node_id]
                peer.client.drop()  # its warm connections and TLS sessions go now, not after the poll stops
                self._spawn_close(peer)
                if pin is None:
                    self.bus.publish(PeerRemoved(node=peer.name, node_id=node_id))
            elif pin != peer.pin:
                peer.pin = peer.client.pin = pin  # a new address or name; same certificate
                peer.wake.set()
        for node_id, pin in pins.items():
            if node_id not in self.peers:
                self.peers[node_id] = peer = self._make(pin)
                peer.task = asyncio.create_task(self._run(peer), name=f"peer-{pin.name}")

    def _make(self, pin: PeerPin) -> Peer:
        client = PeerClient(self.identity, pin, self.self_headers)
        holder: list[Peer] = []
        upstream = PeerUpstream(client, self.identity.node_id, lambda: self.mark_unreachable(holder[0]),
                                self.off_lan_allowed)
        peer = Peer(pin, client, upstream)
        holder.append(peer)
        return peer

    def _spawn_close(self, peer: Peer) -> None:
        task = asyncio.create_task(self._drop(peer))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _drop(self, peer: Peer) -> None:
        peer.closed = True  # the loop checks it too: a cancel can be lost when a wake-up races it
        if peer.task is not None:
            peer.task.cancel()
            await asyncio.wait([peer.task], timeout=2.0)
        await peer.client.aclose()

    # -- routing ---------------------------------------------------------------------------------------

    def upstreams(self) -> list[Upstream]:
        """Online peers, least loaded first; on a tie the one with more free slots."""
        online = [p.upstream for p in self.peers.values() if p.online]
        online.sort(key=lambda u: (u.load(), -u.free_slots(), u.node_name, u.node_id))
        return list(online)

    def find(self, ref: str) -> Peer | None:
        """A peer by node id, unique id prefix or name; None if none matches."""
        ref = ref.strip()
        if ref in self.peers:
            return self.peers[ref]
        matches = [p for p in self.peers.values() if (len(ref) >= 4 and p.node_id.startswith(ref))
                   or ref in (p.name, p.pin.name)]
        if len(matches) > 1:
            ids = ", ".join(p.node_id for p in matches)
            raise ConfigError(f"{ref!r} could mean several paired nodes ({ids}); give the node id")
        return matches[0] if matches else None

    # -- polling ---------------------------------------------------------------------------------------

    async def _run(self, peer: Peer) -> None:
        while not peer.closed:
            peer.wake.clear()  # before the poll: a wake-up during it means "poll again now"
            # A bug in one poll must not end the peer's loop (nor go unsaid: routing depends on it).
            with guarded(f"polling peer {peer.name}", log, self._tell):
                await self.poll(peer)
                if not peer.online and peer.polls % MANUAL_EVERY == 1:
                    await self._try_manual(peer)
                self._check_silence(peer)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_s):
                    await peer.wake.wait()

    async def poll(self, peer: Peer) -> None:
        peer.polls += 1
        want_facts = not peer.online or not peer.facts or peer.polls % FACTS_EVERY == 0
        try:
            inventory = await peer.client.call("GET", "/inventory", timeout_s=self.timeout_s)
            facts = await peer.client.call("GET", "/facts", timeout_s=self.timeout_s) if want_facts else None
        except PeerError as exc:
            peer.failures += 1
            peer.last_error = exc.message
            if peer.online and peer.failures >= OFFLINE_AFTER:
                self._set_offline(peer, exc.message)
            return
        if not isinstance(inventory, dict) or inventory.get("id") != peer.node_id:
            peer.failures += 1
            peer.last_error = "the peer answered with an unexpected inventory"
            return
        peer.failures, peer.last_error = 0, None
        self._heard(peer)
        changed = peer.upstream.update(inventory)
        # Warm relay connections: sized to recent demand, opened ahead at peer-up and after a burst.
        peer.client.pool.server_keepalive(peer.upstream.server_keepalive_s)
        peer.client.keep_warm()
        if isinstance(facts, dict):
            peer.facts = peer_facts.facts(facts)
        name = peer_facts.name(inventory.get("name"))
        if name is not None and name != peer.upstream.node_name:
            peer.upstream.node_name = name
            changed = True
        if not peer.online:
            peer.online = True
            log.info("peer %s (%s) is online at %s", peer.name, peer.node_id, peer.pin.address)
            self.bus.publish(PeerJoined(node=peer.name, node_id=peer.node_id, address=peer.pin.address))
            if self.on_online is not None:
                self.on_online(peer)
        elif changed:
            self.bus.publish(NodeChanged(node=peer.name, node_id=peer.node_id, reason="peer inventory changed"))

    def _set_offline(self, peer: Peer, reason: str) -> None:
        peer.online = False
        log.info("peer %s is offline: %s", peer.name, reason)
        self.bus.publish(PeerLeft(node=peer.name, node_id=peer.node_id, reason=reason))

    def mark_unreachable(self, peer: Peer) -> None:
        """A relay reached nothing at all: route elsewhere until a poll finds the peer again."""
        peer.failures = max(peer.failures, OFFLINE_AFTER)
        if peer.online:
            self._set_offline(peer, "a relayed request could not reach it")
        peer.wake.set()

    def _heard(self, peer: Peer) -> None:
        peer.last_heard = time.monotonic()
        peer.last_seen = time.time()
        peer.silence_reported = False

    def _check_silence(self, peer: Peer) -> None:
        silent_for = time.monotonic() - peer.last_heard
        if silent_for > self.silent_s and not peer.silence_reported:
            peer.silence_reported = True
            if self.on_silent is not None:
                self.on_silent(peer, silent_for)

    # -- finding peers again ---------------------------------------------------------------------------

    def heard_from(self, pin: PeerPin, observed_host: str | None, claimed_port: str | None) -> None:
        """A pinned peer called us: it is alive, and tells us where its cluster port is."""
        peer = self.peers.get(pin.node_id)
        if peer is None:
            return
        self._heard(peer)
        if peer.online:
            return
        if observed_host and claimed_port and claimed_port.isdigit() and 0 < int(claimed_port) < 65536:
            host = f"[{observed_host}]" if ":" in observed_host else observed_host
            address = f"{host}:{claimed_port}"
            if address != peer.pin.address:
                log.info("peer %s called from %s; updating its address", peer.name, address)
                self.trust.update_address(peer.node_id, address)
        peer.wake.set()

    def offer(self, node_id: str, addresses: list[str]) -> None:
        """Addresses where a peer may be now (mDNS); tried only if it is offline."""
        peer = self.peers.get(node_id)
        if peer is None or peer.online or not addresses:
            return
        task = asyncio.create_task(self._try_addresses(peer, addresses))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _try_addresses(self, peer: Peer, addresses: list[str]) -> bool:
        for address in addresses:
            if address == peer.pin.address:
                continue
            try:
                found = await peer.client.call("GET", "/inventory", timeout_s=5.0, address=address)
            except PeerError:
                continue
            if isinstance(found, dict) and found.get("id") == peer.node_id:
                log.info("found peer %s at %s", peer.name, address)
                self.trust.update_address(peer.node_id, address)
                peer.wake.set()
                return True
        return False

    async def _try_manual(self, peer: Peer) -> None:
        await self._try_addresses(peer, [a for a in self.manual if a != peer.pin.address])

    async def add_address(self, address: str) -> Peer | None:
        """``peers add``: which paired node answers at ``address``? Remembered either way."""
        address = normalize_address(address)
        if address not in self.manual:
            self._save_manual([*self.manual, address])  # saved first: a refused write changes nothing
            self.manual.append(address)
        peers = list(self.peers.values())

        async def answers(peer: Peer) -> Peer | None:
            try:
                found = await peer.client.call("GET", "/inventory", timeout_s=5.0, address=address)
            except PeerError:
                return None
            return peer if isinstance(found, dict) and found.get("id") == peer.node_id else None

        for peer in await asyncio.gather(*(answers(p) for p in peers)):
            if peer is not None:
                if peer.pin.address != address:
                    self.trust.update_address(peer.node_id, address)
                peer.wake.set()
                return peer
        return None

    def _load_manual(self) -> list[str]:
        try:
            data = json.loads(self._manual_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [a for a in data.get("addresses", []) if isinstance(a, str)] if isinstance(data, dict) else []

    def _save_manual(self, addresses: list[str]) -> None:
        save_private(self._manual_file, json.dumps({"addresses": addresses}, indent=2).encode(),
                     "the peer address")

    # -- views -----------------------------------------------------------------------------------------

    def rows(self) -> list[NodeRow]:
        """One row per peer for ``pairwise nodes`` (and its shared nodes, marked ``via``)."""
        out: list[NodeRow] = []
        for peer in sorted(self.peers.values(), key=lambda p: p.name):
            facts = peer.facts
            out.append({
                "id": peer.node_id, "name": peer.name, "kind": "peer", "online": peer.online,
                "address": peer.pin.address, "os": facts.get("os"), "hardware": facts.get("hardware"),
                "engines": facts.get("engines") or [], "models": [m.name for m in peer.upstream.models()],
                "in_flight": peer.upstream.remote_total, "last_seen": peer.last_seen,
                "error": None if peer.online else peer.last_error,
            })
            out.extend(self._shared_of(peer))
        return out

    def shared_rows(self) -> list[RelayedRentedFact]:
        """Only the peers' shared (rented) nodes of ``rows``: what the registry's views of peers' rented
        nodes read on every request, without each peer's own row and model list (rented/peer_view.py)."""
        return [row for peer in sorted(self.peers.values(), key=lambda p: p.name) for row in self._shared_of(peer)]

    def _shared_of(self, peer: Peer) -> list[RelayedRentedFact]:
        out: list[RelayedRentedFact] = []
        shared_nodes = peer.facts.get("shared_nodes")
        for shared in shared_nodes if isinstance(shared_nodes, list) else []:
            if not isinstance(shared, dict):  # peer_facts.facts kept objects only
                continue
            # Bounded and cleaned, sponsored by this peer, routed under this node's policy for it.
            cleaned = peer_facts.shared_node(shared, sponsor=peer.name, sponsor_id=peer.node_id,
                                             policy=self.rented_policy)
            if cleaned is not None:
                relayed = {**cleaned, "via": peer.name, "online": bool(cleaned.get("online")) and peer.online}
                out.append(cast("RelayedRentedFact", relayed))
        return out

    def peer_rows(self) -> list[PeerRow]:
        return [{"id": p.node_id, "name": p.name, "address": p.pin.address, "online": p.online,
                 "paired_at": p.pin.paired_at.isoformat(), "fingerprint": p.pin.fingerprint,
                 "last_seen": p.last_seen, "error": None if p.online else p.last_error,
                 "relay_pool": p.client.pool.row()}
                for p in sorted(self.peers.values(), key=lambda p: p.name)]


def normalize_address(address: str) -> str:
    from app.settings import parse_host_port

    host, port = parse_host_port(address.strip())
    if not host or not 0 < port < 65536:
        raise ConfigError(f"{address!r} is not HOST:PORT")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
