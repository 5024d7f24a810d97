"""Decisions of the requesters feature without sockets: the key store, limits with a fake clock,
the failed-key throttle, and the requester record's forms."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.services.errors import ConfigError, RequesterLimitError
from app.services.events import EventBus, RequesterLimited, WorkloadUpdated
from app.services.jobs.records import Workload
from app.services.jobs.requester import Requester, local_app, relayed_requester, with_key
from app.services.jobs.store import JobStore
from app.services.keys.auth import FailedAttempts
from app.services.keys.limit_text import limit_from_peer, refusal_from_peer
from app.services.keys.limits import RequesterLimits, today_text
from app.services.keys.store import KeyRefused, KeyStore
from app.services.node_ids import rented_node_id
from app.services.rented.decl import validate_decl
from app.services.rented.upstream import RentedUpstream

ME, PEER = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_key_is_shown_once_and_kept_only_as_its_sha256(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys.json")
    record, key = store.create("phone", models=["llama*"], off_lan="deny", usd_per_day=1.5, requests_per_min=3)
    assert key.startswith("pw-") and len(key) >= 3 + 16 and all(c.isalnum() or c in "-_" for c in key[3:])
    stored = (tmp_path / "keys.json").read_text()
    assert key not in stored and key[3:] not in stored
    assert json.loads(stored)["keys"][0]["digest"] == record.digest and len(record.digest) == 64
    assert (tmp_path / "keys.json").stat().st_mode & 0o777 == 0o600
    again = KeyStore(tmp_path / "keys.json")  # a restart reads the same records
    assert again.verify(key).name == "phone" and again.verify(key).allows_model("llama3:latest")
    assert not again.verify(key).allows_model("qwen")
    assert "digest" not in record.public_json() and "key" not in record.public_json()


def test_wrong_missing_and_revoked_keys_are_refused_saying_why(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys.json")
    _, key = store.create("ci")
    refusals = {}
    for label, given in (("missing", None), ("not ours", "sk-placeholder"), ("wrong", "pw-" + "x" * 32)):
        with pytest.raises(KeyRefused) as caught:
            store.verify(given)
        refusals[label] = caught.value.message
    assert "needs a key" in refusals["missing"] and "start with 'pw-'" in refusals["not ours"]
    assert "unknown key" in refusals["wrong"] and "x" * 32 not in refusals["wrong"]
    store.revoke("ci")
    with pytest.raises(KeyRefused, match="key 'ci' was revoked"):
        store.verify(key)
    assert [r.public_json()["state"] for r in store.list()] == ["revoked"]
    _, fresh = store.create("ci")  # a revoked name may be given to a new key
    assert store.verify(fresh).name == "ci"
    with pytest.raises(ConfigError, match="exists"):
        store.create("ci")
    with pytest.raises(ConfigError, match="key name"):
        store.create("../etc")


def test_a_damaged_key_file_is_said_aloud_not_emptied(tmp_path: Path) -> None:
    (tmp_path / "keys.json").write_text("{not json")
    with pytest.raises(ConfigError, match="damaged"):
        KeyStore(tmp_path / "keys.json")
    assert (tmp_path / "keys.json").read_text() == "{not json"


def test_repeated_wrong_keys_are_throttled_per_address() -> None:
    clock = Clock()
    throttle = FailedAttempts(limit=3, window_s=60, clock=clock)
    for _ in range(3):
        assert throttle.retry_after("10.0.0.9") is None
        throttle.failed("10.0.0.9")
    assert throttle.retry_after("10.0.0.9") == 60
    assert throttle.retry_after("10.0.0.10") is None, "another address is not throttled"
    clock.now += 45
    assert throttle.retry_after("10.0.0.9") == 15
    clock.now += 15
    assert throttle.retry_after("10.0.0.9") is None


def _rented(limits: dict[str, Any]) -> RentedUpstream:
    decl = validate_decl({"name": "l40s", "url": "https://gpu.example", "price_per_hour": 3.6, "requesters": limits})
    return RentedUpstream(decl, sponsor_name="sponsor", sponsor_id=ME, token=None)


def _finished(who: Requester, cost: float, at: float, rented: str = "l40s") -> Workload:
    job = Workload(model="m", api="openai", origin_node=who.node_name, origin_node_id=who.node_id, requester=who,
                   serving_node=rented, serving_node_id=rented_node_id(ME, rented), state="completed",
                   rented_node=rented, off_lan=True, cost_usd=cost)
    job.finished_at = at
    return job


async def test_a_peer_over_its_daily_cap_is_refused_until_utc_midnight(tmp_path: Path) -> None:
    clock, bus = Clock(), EventBus()
    notices: list[Any] = []
    bus.on(lambda e: notices.append(e) if isinstance(e, RequesterLimited) else None)
    limits = RequesterLimits(ME, "sponsor", KeyStore(tmp_path / "keys.json"), bus, clock=clock)
    gpu = _rented({"usd_per_day": {"laptop-b": 2, "*": 10}})
    laptop = SimpleNamespace(requester=Requester(PEER, "laptop-b"))
    mine = SimpleNamespace(requester=local_app(ME, "sponsor", "curl/8"))
    limits.gate(gpu, laptop)
    first = _finished(laptop.requester, 1.1, clock.now)
    limits.count(first)
    first.cost_usd = 1.2
    limits.count(first)  # the same job again (its cost corrected): counted once, at its latest figure
    limits.count(_finished(mine.requester, 0.3, clock.now))
    limits.gate(gpu, laptop)
    over = _finished(laptop.requester, 0.9, clock.now)
    limits.count(over)
    with pytest.raises(RequesterLimitError) as caught:
        limits.gate(gpu, laptop)
    message = caught.value.message
    assert "laptop-b reached its $2/day on l40s" in message and "resets at 00:00 UTC" in message
    assert caught.value.retry_after_s is None and caught.value.status == 429
    limits.gate(gpu, mine)  # the sponsor's own callers are not limited by peers' caps
    with pytest.raises(RequesterLimitError):
        limits.gate(gpu, laptop)
    assert [n.title for n in notices] == ["laptop-b reached its $2/day on l40s"], "told once"
    assert today_text(limits.today("l40s")) == "today: laptop-b $2.10, this machine $0.30"
    clock.now += 86400  # the next UTC day
    limits.gate(gpu, laptop)


async def test_rates_refuse_with_the_wait_and_count_only_admitted_requests(tmp_path: Path) -> None:
    clock = Clock()
    keys = KeyStore(tmp_path / "keys.json")
    keys.create("bot", requests_per_min=2)
    limits = RequesterLimits(ME, "sponsor", keys, EventBus(), clock=clock)
    gpu = _rented({"requests_per_min": {"*": 3}})
    bot = SimpleNamespace(requester=with_key(ME, "sponsor", "bot"))
    peer = SimpleNamespace(requester=Requester(PEER, "laptop-b"))
    engine = SimpleNamespace(kind="engine")
    for _ in range(5):
        limits.gate(engine, bot)  # LAN capacity is never limited
    limits.gate(gpu, bot)
    clock.now += 10
    limits.gate(gpu, bot)
    with pytest.raises(RequesterLimitError) as caught:
        limits.gate(gpu, bot)
    assert caught.value.retry_after_s == 50 and "key bot is over its 2 requests/min" in caught.value.message
    for _ in range(3):
        limits.gate(gpu, peer)
    with pytest.raises(RequesterLimitError, match="laptop-b is over its 3 requests/min on l40s; retry after 60 s"):
        limits.gate(gpu, peer)
    clock.now += 50
    limits.gate(gpu, bot)


def test_a_sponsors_refusal_reads_back_as_a_limit_with_its_wait() -> None:
    error = limit_from_peer("peer sponsor answered 429: refused: laptop-b is over its 3 requests/min on l40s; "
                            "retry after 17 s")
    assert error.message.startswith("refused: laptop-b") and error.retry_after_s == 17


def test_a_sponsors_refusal_by_policy_reads_back_as_a_refusal_and_nothing_else_does() -> None:
    words = "model 'm' cannot be served here: gpu: budget reached: $0.02 of $0.01 per day (UTC)"
    error = refusal_from_peer(f"node A answered 403: {words}")
    assert error is not None and error.message == words and error.status == 403
    # A 403 that is no rule of the sponsor's (it no longer pins us) stays an upstream failure.
    assert refusal_from_peer("node A answered 403: peer not paired") is None


def test_requesters_read_every_stored_form() -> None:
    legacy = Workload.from_json({"model": "m", "api": "openai", "origin_node": "b", "origin_node_id": PEER,
                                 "requester": "curl/8", "id": "x", "state": "completed"})
    assert legacy.requester == Requester(PEER, "b", app="curl/8") and "unauthenticated" in legacy.requester.label
    keyed = with_key(ME, "a", "ci", "openai/python")
    assert Workload.from_json({**legacy.to_json(), "requester": keyed.to_json()}).requester == keyed
    assert keyed.label == "a · key ci"
    forged = Requester.from_json({"node_id": PEER, "node_name": "b", "authenticated": True})
    assert forged.authenticated is False, "authenticated only with a key name"
    relayed = relayed_requester(PEER, "b", {"X-Pairwise-Requester-Key": "ci", "X-Pairwise-Requester": "x" * 999})
    assert relayed.key == "ci" and relayed.authenticated and len(relayed.app or "") == 200


async def test_a_keys_daily_cap_counts_its_spend_on_any_rented_node_and_only_this_nodes_records(
        tmp_path: Path) -> None:
    clock, bus = Clock(), EventBus()
    keys = KeyStore(tmp_path / "keys.json")
    keys.create("ci", usd_per_day=1)
    limits = RequesterLimits(ME, "sponsor", keys, bus, clock=clock)
    ci = SimpleNamespace(requester=with_key(ME, "sponsor", "ci"))
    peer_gpu = SimpleNamespace(kind="rented")  # a peer's rented node, reached through its sponsor
    limits.gate(peer_gpu, ci)
    # The peer's own copy of a record (replicated) never moves spend here; our own record does.
    forged = _finished(Requester(PEER, "laptop-b"), 50.0, clock.now)
    bus.publish(WorkloadUpdated(job=forged.to_json(), source=PEER))
    assert limits.today("l40s") == []
    spent = _finished(ci.requester, 1.25, clock.now, rented="their-gpu")
    bus.publish(WorkloadUpdated(job=spent.to_json()))
    with pytest.raises(RequesterLimitError, match=r"key ci reached its \$1/day on rented nodes \(spent \$1.25"):
        limits.gate(peer_gpu, ci)
    limits.gate(SimpleNamespace(kind="engine"), ci)  # LAN capacity is never limited


def test_the_rebuilt_spend_counts_only_what_this_node_charged_or_its_keys_spent(tmp_path: Path) -> None:
    clock = Clock()
    keys = KeyStore(tmp_path / "keys.json")
    keys.create("ci", usd_per_day=10)
    laptop, ci = Requester(PEER, "laptop-b"), with_key(ME, "sponsor", "ci")
    jobs = JobStore(tmp_path / "state.db")
    for job in (_finished(laptop, 0.5, clock.now), _finished(ci, 0.25, clock.now),
                _finished(laptop, 7.0, clock.now - 3 * 86400)):  # three days ago: not today's
        job.created_at = job.finished_at or clock.now
        jobs.upsert(job)
    theirs = _finished(laptop, 9.0, clock.now)  # the peer's rented node of the same name
    theirs.serving_node_id = rented_node_id(PEER, "l40s")
    # A peer's clock far ahead: first in newest-first order, and finished long ago.
    skewed = _finished(laptop, 3.0, 1.0)
    skewed.created_at, skewed.serving_node_id = clock.now + 30 * 86400, rented_node_id(PEER, "l40s")
    someone_elses_key = _finished(Requester(PEER, "evil", key="ci"), 4.0, clock.now, rented="their-gpu")
    someone_elses_key.serving_node_id = rented_node_id(PEER, "their-gpu")
    for job in (theirs, skewed, someone_elses_key):
        jobs.upsert(job)
    limits = RequesterLimits(ME, "sponsor", keys, EventBus(), clock=clock)
    limits.load(jobs)
    jobs.close()
    assert limits.today("l40s") == [{"node_id": PEER, "requester": "laptop-b", "usd": 0.5},
                                     {"node_id": ME, "requester": "this machine", "usd": 0.25}]
    assert limits.key_spend_today("ci") == 0.25
