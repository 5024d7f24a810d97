"""Decisions of the cluster, in process: peer load, ordering, job replication rules, invite tombstones."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.services.backends.base import ModelEntry
from app.services.cluster.discovery import Discovery, decode_properties, instance_name, local_addresses
from app.services.cluster.facts import LoadBook, clean_details, is_shareable, load_doc
from app.services.cluster.pairing_protocol import PinAlreadyUsed, PinExpired, PinVoid, WrongPin
from app.services.cluster.pairing_service import PairingService, pairing_port_for
from app.services.cluster.peer_client import PeerClient
from app.services.cluster.peer_upstream import FIRST_BYTE_MARGIN_S, IDLE_MARGIN_S, PeerUpstream
from app.services.cluster.peers import Peer, PeerManager, normalize_address
from app.services.cluster.replication import Replication
from app.services.cluster.trust import PeerPin
from app.services.cluster.warm_pool import SERVER_KEEPALIVE_S
from app.services.errors import ConfigError
from app.services.events import EventBus, PairInviteEnded
from app.services.jobs.records import Workload
from app.services.jobs.requester import Requester
from app.services.jobs.store import JobStore
from app.services.node_ids import rented_node_id
from tests.cluster.conftest import Node

ME, PEER, OTHER = (str(uuid.uuid4()) for _ in range(3))


def stub_upstream(node_id: str = PEER, name: str = "alpha") -> PeerUpstream:
    client: Any = SimpleNamespace(pin=SimpleNamespace(node_id=node_id, name=name))
    return PeerUpstream(client, ME, lambda: None)


def test_peer_load_counts_our_requests_live_and_the_rest_as_reported() -> None:
    up = stub_upstream()
    changed = up.update({"models": [{"name": "m1", "details": {"size": 1}}, {"bad": 1}, "junk"],
                         "load": {"in_flight": 3, "capacity": 8, "by_origin": {ME: 2, OTHER: 1},
                                  "first_byte_timeout_s": 60, "idle_timeout_s": 7}})
    assert changed and [m.name for m in up.models()] == ["m1"] and up.models()[0].details == {"size": 1}
    assert (up.remote_total, up.remote_in_flight, up.capacity) == (3, 1, 8)
    assert up.first_byte_timeout_s == 60 + FIRST_BYTE_MARGIN_S
    assert up.idle_timeout_s == 7 + IDLE_MARGIN_S  # a stall there is the peer's to report first
    up.in_flight = 2  # ours, counted by the request way itself
    assert up.load() == pytest.approx(3 / 8) and up.free_slots() == 5
    assert up.api_for("ollama") == "ollama" and up.api_for("openai") == "openai"
    assert not up.update({"models": [{"name": "m1"}], "load": "garbage"})  # same models: no change
    assert up.capacity == 4 and up.remote_in_flight == 0


def test_online_peers_ordered_by_load_then_free_slots(make_node: Callable[[str], Node], tmp_path: Path) -> None:
    me = make_node("me")
    manager = PeerManager(me.identity, me.trust, EventBus(), {}, tmp_path / "manual_peers.json")
    rows = {"big": (8, 0, True), "small": (2, 0, True), "busy": (8, 6, True), "down": (16, 0, False)}
    for name, (capacity, remote, online) in rows.items():
        up = stub_upstream(str(uuid.uuid4()), name)
        up.capacity, up.remote_in_flight = capacity, remote
        pin: Any = SimpleNamespace(node_id=up.node_id, name=name)
        manager.peers[up.node_id] = Peer(pin, up.client, up, online=online)
    assert [u.node_name for u in manager.upstreams()] == ["big", "small", "busy"]


def test_normalize_address() -> None:
    assert normalize_address(" 10.0.0.5:14330 ") == "10.0.0.5:14330"
    assert normalize_address("[fe80::1]:14330") == "[fe80::1]:14330"
    with pytest.raises(ConfigError):
        normalize_address("10.0.0.5")


# -- facts -------------------------------------------------------------------------------------------


def test_facts_share_only_allowlisted_details_and_shared_upstreams() -> None:
    details = {"size": 5, "digest": "d", "url": "https://secret.example", "token": "x",
               "details": {"family": "llama", "endpoint": "https://e.example"}}
    assert clean_details(details) == {"size": 5, "digest": "d", "details": {"family": "llama"}}
    engine: Any = SimpleNamespace(kind="engine")
    private: Any = SimpleNamespace(kind="rented", shared_with_cluster=False)
    shared: Any = SimpleNamespace(kind="rented", shared_with_cluster=True)
    peer: Any = SimpleNamespace(kind="peer")
    assert [is_shareable(u) for u in (engine, private, shared, peer)] == [True, False, True, False]

    book = LoadBook()
    book.enter(PEER)
    book.enter(PEER)
    book.leave(PEER)
    book.enter(OTHER)
    book.leave(OTHER)
    up: Any = SimpleNamespace(in_flight=1, capacity=4, first_byte_timeout_s=30.0, idle_timeout_s=8.0)
    assert load_doc([up], book) == {"in_flight": 1, "capacity": 4, "by_origin": {PEER: 1},
                                    "first_byte_timeout_s": 30.0, "idle_timeout_s": 8.0,
                                    "keepalive_s": SERVER_KEEPALIVE_S}


# -- replication -------------------------------------------------------------------------------------


@pytest.fixture
def repl(tmp_path: Path) -> Iterator[tuple[Replication, SimpleNamespace]]:
    node = SimpleNamespace(node_id=ME, jobs=JobStore(tmp_path / "state.db"), bus=EventBus(),
                           tracker=SimpleNamespace(replicators=[]))
    peers: Any = SimpleNamespace(peers={}, poll_s=1.0)
    yield Replication(node, peers), node  # type: ignore[arg-type]
    node.jobs.close()


def record(origin: str, serving: str | None, state: str = "running", **extra: Any) -> dict[str, Any]:
    job = Workload(model="m", api="openai", origin_node="o", origin_node_id=origin, requester=Requester(origin, "o", app="app"),
                   serving_node="s" if serving else None, serving_node_id=serving, state=state)  # type: ignore[arg-type]
    data = job.to_json()
    data.update(extra)
    return data


def pin_of(node_id: str) -> PeerPin:
    return SimpleNamespace(node_id=node_id, name="peer")  # type: ignore[return-value]


def test_a_peer_speaks_only_for_the_jobs_it_originated(repl: tuple[Replication, SimpleNamespace]) -> None:
    replication, node = repl
    theirs, foreign = record(PEER, OTHER), record(OTHER, PEER)
    bad = [record(PEER, None, state="exploded"), {"id": "x"}, "junk", record(PEER, None, id="../../etc")]
    assert replication.receive(pin_of(PEER), [theirs, foreign, *bad]) == {"stored": 1, "ignored": 5}
    assert node.jobs.get(theirs["id"]) is not None and node.jobs.get(foreign["id"]) is None


def test_newest_version_wins(repl: tuple[Replication, SimpleNamespace]) -> None:
    replication, node = repl
    done = record(PEER, PEER, state="completed", updated_at=time.time())
    stale = {**done, "state": "running", "updated_at": done["updated_at"] - 5}
    replication.receive(pin_of(PEER), [done, stale])
    assert node.jobs.get(done["id"]).state == "completed"


def test_the_serving_node_keeps_its_own_record_of_a_relayed_job(repl: tuple[Replication, SimpleNamespace]) -> None:
    replication, node = repl
    mine = Workload.from_json(record(PEER, ME, requester="peer-node"))
    node.jobs.save(mine)
    origin_view = {**mine.to_json(), "requester": "some app", "state": "completed", "updated_at": time.time() + 1}
    assert replication.receive(pin_of(PEER), [origin_view]) == {"stored": 0, "ignored": 1}
    assert node.jobs.get(mine.id).requester.app == "peer-node"
    # A relayed job that failed here and then went to another owner: the origin's record says so.
    moved = {**origin_view, "serving_node_id": OTHER, "updated_at": time.time() + 2}
    assert replication.receive(pin_of(PEER), [moved])["stored"] == 1


def test_what_this_node_served_and_charged_is_never_a_peers_word(repl: tuple[Replication, SimpleNamespace]) -> None:
    replication, node = repl
    node.tracker.updated = node.jobs.save
    gpu = rented_node_id(ME, "gpu")
    # A record saying our rented node served a job we hold no record of: not taken (our spend by
    # requester is rebuilt from the records we keep).
    claimed = record(PEER, gpu, state="completed", rented_node="gpu", cost_usd=5.0)
    assert replication.receive(pin_of(PEER), [claimed]) == {"stored": 0, "ignored": 1}
    assert node.jobs.get(claimed["id"]) is None
    # A rented node of the peer's own with the same name is the peer's business: taken.
    theirs = record(PEER, rented_node_id(PEER, "gpu"), state="completed", rented_node="gpu", cost_usd=5.0)
    assert replication.receive(pin_of(PEER), [theirs])["stored"] == 1
    # A cost note for our own job on our own rented node: only our meter sets that cost.
    ours = Workload.from_json(record(ME, gpu, state="completed", rented_node="gpu", cost_usd=0.25))
    node.jobs.save(ours)
    assert replication.receive(pin_of(PEER), [{**ours.to_json(), "cost_usd": 9.0}]) == {"stored": 0, "ignored": 1}
    assert node.jobs.get(ours.id).cost_usd == 0.25
    # ...while the sponsor of the rented node that served one of our jobs does set it.
    on_peers = Workload.from_json(record(ME, rented_node_id(PEER, "l4"), state="completed", rented_node="l4"))
    node.jobs.save(on_peers)
    assert replication.receive(pin_of(PEER), [{**on_peers.to_json(), "cost_usd": 0.5}])["stored"] == 1
    assert node.jobs.get(on_peers.id).cost_usd == 0.5


def test_only_jobs_we_originated_are_pushed_to_online_peers(repl: tuple[Replication, SimpleNamespace]) -> None:
    replication, _ = repl
    online: Any = SimpleNamespace(node_id=PEER, online=True)
    offline: Any = SimpleNamespace(node_id=OTHER, online=False)
    replication.peers.peers = {PEER: online, OTHER: offline}
    replication.on_local_change(Workload.from_json(record(ME, PEER)))
    replication.on_local_change(Workload.from_json(record(PEER, ME)))  # served for a peer: its origin pushes
    assert list(replication._outbox) == [PEER] and len(replication._outbox[PEER]) == 1


def test_silent_peer_running_jobs_fail_with_the_reason(repl: tuple[Replication, SimpleNamespace]) -> None:
    replication, node = repl
    theirs = Workload.from_json(record(PEER, PEER))
    served_by_them = Workload.from_json(record(OTHER, PEER))
    ours = Workload.from_json(record(ME, PEER))  # our own request way ends it, not the silence rule
    done = Workload.from_json(record(PEER, PEER, state="completed"))
    for job in (theirs, served_by_them, ours, done):
        node.jobs.save(job)
    peer: Any = SimpleNamespace(node_id=PEER, name="alpha")
    assert replication.fail_silent(peer, 61.2) == 2
    failed = node.jobs.get(theirs.id)
    assert failed.state == "failed" and failed.error == "node alpha went silent for 61 s while this job was running"
    assert node.jobs.get(ours.id).state == "running" and node.jobs.get(done.id).state == "completed"
    # The peer comes back with what really happened: its record is newer than the mark.
    truth = {**theirs.to_json(), "state": "completed", "updated_at": theirs.updated_at + 0.01}
    replication.receive(pin_of(PEER), [truth])
    assert node.jobs.get(theirs.id).state == "completed"


# -- the invite's tombstone --------------------------------------------------------------------------


async def joiner_error(service: PairingService, joiner: PairingService, pin: str) -> Exception:
    address = service.status()["address"]
    with pytest.raises(Exception) as caught:
        await joiner.join(address, pin)
    return caught.value


@pytest.fixture
async def services(make_node: Callable[[str], Node]) -> Any:
    made: list[PairingService] = []

    def make(name: str) -> PairingService:
        node = make_node(name)
        service = PairingService(node.identity, node.trust, EventBus(), bind_host="127.0.0.1",
                                 cluster_port=0, cluster_address="127.0.0.1:1")
        made.append(service)
        return service

    yield make
    for service in made:
        await service.close()


async def test_ended_invites_say_how_they_ended(services: Any) -> None:
    a, b, c = services("a"), services("b"), services("c")
    assert pairing_port_for(14330) == 14331 and pairing_port_for(0) == 0

    invite = await a.invite()
    wrong = f"{(int(invite.pin) + 1) % 10**6:06d}"
    assert isinstance(await joiner_error(a, b, wrong), WrongPin)
    await b.join(invite.address, invite.pin)
    await asyncio.wait_for(_state(a, "used"), 5)
    assert isinstance(await joiner_error(a, c, invite.pin), PinAlreadyUsed)

    invite = await a.invite(ttl_s=1)
    await asyncio.wait_for(_state(a, "expired"), 5)
    assert isinstance(await joiner_error(a, c, invite.pin), PinExpired)

    invite = await a.invite()
    wrong = f"{(int(invite.pin) + 1) % 10**6:06d}"
    for _ in range(3):
        await joiner_error(a, c, wrong)
    await asyncio.wait_for(_state(a, "void"), 5)
    assert isinstance(await joiner_error(a, c, invite.pin), PinVoid)
    await a.cancel()
    assert a.status()["state"] == "void"  # cancelling removes the tombstone, not the history
    assert len(c.trust) == 0 and len(a.trust) == 1


async def _state(service: PairingService, wanted: str) -> None:
    if service.status()["state"] == wanted:
        return
    events = service.bus.subscribe()
    while True:
        event = await events.get()
        if isinstance(event, PairInviteEnded) and event.state == wanted:
            return


# -- discovery ---------------------------------------------------------------------------------------


def test_discovery_helpers() -> None:
    assert instance_name("Dan's MacBook Pro (2)", "1234567890ab") == "Dan-s-MacBook-Pro-2-12345678"
    assert len(instance_name("x" * 200, "1234567890ab")) <= 63
    assert decode_properties({b"id": b"abc", b"port": b"14330", b"none": None}) == {"id": "abc", "port": "14330"}
    assert local_addresses("127.0.0.1") == ["127.0.0.1"]


@pytest.mark.skipif(os.environ.get("PAIRWISE_TEST_MDNS") != "1",
                    reason="sends multicast on the LAN; set PAIRWISE_TEST_MDNS=1 to run")
async def test_mdns_announce_and_browse() -> None:
    found: dict[str, list[str]] = {}
    both = asyncio.Event()

    def seen(node_id: str, addresses: list[str]) -> None:
        found.setdefault(node_id, addresses)
        if ME in found and PEER in found:
            both.set()

    first = Discovery(ME, "first", "0.0.0.0", 40001, seen)
    second = Discovery(PEER, "second", "0.0.0.0", 40002, seen)
    await first.start()
    await second.start()
    try:
        await asyncio.wait_for(both.wait(), 15)
        assert all(a.endswith(":40001") for a in found[ME]) and all(a.endswith(":40002") for a in found[PEER])
    finally:
        await first.stop()
        await second.stop()


def test_peer_client_needs_an_address(make_node: Callable[[str], Node]) -> None:
    me, other = make_node("me"), make_node("other")
    pin = PeerPin.create(other.identity.node_id, "other", other.identity.cert_pem, None)
    client = PeerClient(me.identity, pin, {})
    assert client.hostname == f"{other.identity.node_id}.node.pairwise"
    with pytest.raises(Exception, match="no address is known for node other"):
        client._address(None)
    assert ModelEntry("x").canonical == "x:latest"
