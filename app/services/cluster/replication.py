"""Shared Jobs: workload records replicate so every node lists each job once.

Rules, chosen so one job never shows twice or flips between versions:

* The **origin** speaks for a job. Each node pushes changes of the jobs it
  originated to every online peer (batched, coalesced by job id, newest
  wins), and accepts a record only from the node the record names as its
  origin, so a peer can never rewrite someone else's history.
* A relayed job keeps the origin's id on the serving node. The serving node
  does not push it (the origin does, with serving_node filled in from the
  relay's response headers) and keeps its own copy, whose requester is the
  origin node, rather than taking the origin's version. A record that says
  this node (or a rented node it sponsors) served a job is never taken from
  a peer, even where no copy is kept here: a sponsor's spend by requester
  is rebuilt from its own records at start, so a peer's word could inflate it.
* A peer coming online is sent our recent jobs, which covers anything pushed
  while it was away (records are upserted by id, so repeats are harmless).
* A peer silent for longer than ``PAIRWISE_PEER_SILENT_S`` (default 60 s)
  has its running jobs marked failed here, with the reason. The mark is only
  a hair newer than the record it replaces, so any real update the peer sends
  later wins over it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import TYPE_CHECKING

from app.environment import environment
from app.services.cluster.peer_client import PeerError
from app.services.cluster.peers import Peer, PeerManager
from app.services.cluster.record_check import ERROR_LIMIT, RecordRefused, checked_record
from app.services.cluster.trust import PeerPin
from app.services.events import WorkloadUpdated
from app.services.jobs.records import Workload
from app.services.json_types import JsonArray, JsonObject
from app.services.node_ids import rented_node_id
from app.services.text_safety import printable, scrub_for_peer

if TYPE_CHECKING:
    from app.services.cluster.context import ReplicaNode

log = logging.getLogger(__name__)

JOB_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
STATES = ("queued", "running", "completed", "failed", "cancelled", "refused")
MAX_BATCH = 500
# Retention for records peers replicate (this node's own are kept): the newest this many, this young.
PEER_RECORDS_KEPT = 20_000
PEER_RECORDS_MAX_AGE_S = 30 * 86400.0
PRUNE_EVERY = 500  # records stored between two retention passes
# A peer's clock may run a little ahead; a record dated further ahead is dated now plus this.
CLOCK_SKEW_S = 60.0
TIME_FIELDS = ("created_at", "started_at", "finished_at", "updated_at")
MAX_OUTBOX = 2000
CATCH_UP = 200
# A short wait before each batch: a job's open/running/finish (and other jobs' changes)
# then travel in one request instead of three, which keeps replication off the request path's CPU.
LINGER_S = 0.1


class Replication:
    def __init__(self, node: ReplicaNode, peers: PeerManager) -> None:
        self.node, self.peers = node, peers
        self.my_id = node.node_id
        self._outbox: dict[str, dict[str, JsonObject]] = {}
        # One sender per peer, so a slow or unreachable peer never delays the others.
        self._senders: dict[str, asyncio.Task[None]] = {}
        self._running = False
        self._stored_since_prune = 0

    def start(self) -> None:
        self._running = True
        self.node.tracker.replicators.append(self.on_local_change)
        self.prune()  # what an older version kept without a bound

    async def stop(self) -> None:
        self._running = False
        if self.on_local_change in self.node.tracker.replicators:
            self.node.tracker.replicators.remove(self.on_local_change)
        senders = list(self._senders.values())
        for task in senders:
            task.cancel()
        await asyncio.gather(*senders, return_exceptions=True)

    # -- sending ---------------------------------------------------------------------------------------

    def on_local_change(self, job: Workload) -> None:
        """Called by the tracker on every change; cheap (no I/O) because it is on the request path."""
        if job.origin_node_id != self.my_id:
            # A job we serve for a peer: its origin replicates it. Only what the origin cannot know
            # goes back to it: the cost of off-LAN work, which the sponsor's meter sets after the end.
            origin = self.peers.peers.get(job.origin_node_id)
            if job.cost_usd is not None and origin is not None and origin.online:
                self._queue(origin.node_id, self._for_peers(job))
            return
        record = self._for_peers(job)
        for peer in self.peers.peers.values():
            if peer.online:
                self._queue(peer.node_id, record)

    @staticmethod
    def _for_peers(job: Workload) -> JsonObject:
        record = job.to_json()
        if record.get("error"):
            # The local log and Jobs keep the detail; peers get it without URLs, hosts or tokens.
            record["error"] = scrub_for_peer(str(record["error"]), ERROR_LIMIT)
        return record

    def _queue(self, peer_id: str, record: JsonObject) -> None:
        box = self._outbox.setdefault(peer_id, {})
        box[str(record["id"])] = record
        if len(box) > MAX_OUTBOX:  # a peer that cannot keep up gets the newest; catch-up covers the rest
            for key in list(box)[: len(box) - MAX_OUTBOX]:
                del box[key]
        sender = self._senders.get(peer_id)
        if self._running and (sender is None or sender.done()):
            self._senders[peer_id] = asyncio.create_task(self._send(peer_id), name=f"replicate-{peer_id[:8]}")

    def catch_up(self, peer: Peer) -> None:
        """A peer came online: send it our recent jobs."""
        for job in reversed(self.node.jobs.list(limit=CATCH_UP)):
            if job.origin_node_id == self.my_id:
                self._queue(peer.node_id, job.to_json())

    async def _send(self, peer_id: str) -> None:
        # Changes that arrive while a batch is on its way wait for the next batch (coalesced by job id).
        while self._outbox.get(peer_id):
            await asyncio.sleep(LINGER_S)
            peer = self.peers.peers.get(peer_id)
            if peer is None or not peer.online:
                self._outbox.pop(peer_id, None)  # the catch-up when it returns resends what matters
                return
            box = self._outbox.pop(peer_id)
            batch = list(box.values())[-MAX_BATCH:]
            try:
                await peer.client.call("POST", "/jobs/events", {"jobs": [*batch]}, timeout_s=10.0)
            except PeerError as exc:
                log.info("could not send %d job records to %s: %s", len(batch), peer.name, exc.message)
                newer = self._outbox.setdefault(peer_id, {})
                for record in batch:
                    newer.setdefault(str(record["id"]), record)
                await asyncio.sleep(self.peers.poll_s)
                continue
            for record in list(box.values())[:-MAX_BATCH]:  # the rest of an oversized outbox
                self._outbox.setdefault(peer_id, {}).setdefault(str(record["id"]), record)

    # -- receiving -------------------------------------------------------------------------------------

    def receive(self, pin: PeerPin, records: JsonArray) -> dict[str, int]:
        stored = ignored = 0
        for raw in records[: MAX_BATCH * 2]:
            if self._take_cost(raw, pin.node_id):
                stored += 1
                continue
            job = self._valid(raw, pin.node_id)
            if job is None or self._keep_mine(job):
                ignored += 1
                continue
            if self.node.jobs.upsert(job):
                stored += 1
                self.node.bus.publish(WorkloadUpdated(job=job.to_json(), source=pin.node_id))
            else:
                ignored += 1
        self._stored_since_prune += stored
        if self._stored_since_prune >= PRUNE_EVERY:
            self.prune()
        return {"stored": stored, "ignored": ignored}

    def prune(self) -> int:
        """Apply the retention for peers' records (count and age; this node's own are kept)."""
        self._stored_since_prune = 0
        env = environment()
        keep = int(env.number("PAIRWISE_PEER_RECORDS_KEPT", PEER_RECORDS_KEPT, minimum=1))
        gone = self.node.jobs.prune_peers(self.my_id, keep=keep,
                                          max_age_s=env.seconds("PAIRWISE_PEER_RECORDS_MAX_AGE_S",
                                                                PEER_RECORDS_MAX_AGE_S))
        if gone:
            log.info("retention: removed %d job records replicated by peers (kept the newest %d)", gone, keep)
        return gone

    def _take_cost(self, raw: object, sender_id: str) -> bool:
        """A cost note from the node that served one of our jobs: only ``cost_usd`` is taken."""
        if not isinstance(raw, dict) or raw.get("origin_node_id") != self.my_id:
            return False
        if not isinstance(raw.get("id"), str):
            return False
        cost = raw.get("cost_usd")
        job = self.node.jobs.get(raw["id"])
        if job is None or not isinstance(cost, (int, float)) or cost < 0:
            return False
        if not self._served_by(sender_id, job):
            return False
        if job.cost_usd != cost:
            job.cost_usd = float(cost)
            self.node.tracker.updated(job)
        return True

    @staticmethod
    def _served_by(node_id: str, job: Workload) -> bool:
        """Did ``node_id`` serve the job: itself, or through a rented node it sponsors? A rented node's
        id derives from its sponsor's id and its name, so this needs no peer's word (a peer's facts could
        claim any id)."""
        serving = job.serving_node_id
        if serving is None:
            return False
        return serving == node_id or (bool(job.rented_node) and serving == rented_node_id(node_id, job.rented_node or ""))

    def _valid(self, raw: object, sender_id: str) -> Workload | None:
        if not isinstance(raw, dict) or raw.get("origin_node_id") != sender_id:
            return None
        if not isinstance(raw.get("id"), str) or not JOB_ID.match(raw["id"]) or raw.get("state") not in STATES:
            return None
        if not isinstance(raw.get("updated_at"), (int, float)) or not isinstance(raw.get("created_at"), (int, float)):
            return None
        try:
            clean = checked_record(raw)
            latest = time.time() + CLOCK_SKEW_S
            for name in TIME_FIELDS:  # a record dated in the future would top the Jobs list for ever
                when = clean.get(name)
                if isinstance(when, int | float) and when > latest:
                    clean[name] = latest
            return Workload.from_json(clean)
        except RecordRefused as exc:
            log.warning("refused a job record from %s: %s", raw.get("origin_node"), printable(exc, 300))
            return None
        except TypeError:
            return None

    def _keep_mine(self, job: Workload) -> bool:
        """A job this node served (itself or through a rented node it sponsors): the record it wrote
        stays the only one (requester from the origin's pinned certificate, the cost its own meter
        set). A peer's version is never taken, not even where no record is kept here: what this node
        served and charged is never written by a peer (a sponsor's spend by requester is rebuilt from
        these records at its start)."""
        return self._served_by(self.my_id, job)

    # -- silence ---------------------------------------------------------------------------------------

    def fail_silent(self, peer: Peer, silent_for: float) -> int:
        """Mark the running jobs of a peer that went silent as failed, saying why."""
        count = 0
        reason = f"node {peer.name} went silent for {silent_for:.0f} s while this job was running"
        for job in self.node.jobs.list(active_only=True, limit=10_000):
            involved = {job.origin_node_id, job.serving_node_id}
            if peer.node_id not in involved or self.my_id in involved:
                continue  # our own jobs end through their own request way
            job.state, job.error = "failed", reason
            job.finished_at = time.time()
            job.updated_at += 0.001
            self.node.jobs.upsert(job)
            self.node.bus.publish(WorkloadUpdated(job=job.to_json(), source=self.my_id))
            count += 1
        if count:
            log.info("marked %d jobs of silent peer %s as failed", count, peer.name)
        return count
