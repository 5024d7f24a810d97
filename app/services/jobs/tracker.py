"""Opens and closes workload records, stores them and tells the event bus.

A request's own way to its first byte may ask for a change to be told *soon* (``soon=True``): the
record's fields are set at once, and storing, the event and replication follow at the loop's next
turn, after the step that sends the request upstream or writes the answer's first chunk to the
caller (bench/README.md, "The rented link at 40 ms RTT": this bookkeeping was part of every
request's added time to first byte). Order is kept: a change told now first tells that job's pending
ones, so no one sees a job finish before it ran.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from app.services.events import (
    EventBus,
    Notice,
    WorkloadFinished,
    WorkloadRunning,
    WorkloadStarted,
    WorkloadUpdated,
)
from app.services.guard import guarded
from app.services.jobs.records import Workload
from app.services.jobs.requester import Requester
from app.services.jobs.store import JobStore
from app.services.secrets import redact

log = logging.getLogger(__name__)

JobEvent = WorkloadStarted | WorkloadRunning | WorkloadFinished | WorkloadUpdated


class JobTracker:
    def __init__(self, store: JobStore, bus: EventBus, node_name: str, node_id: str) -> None:
        self.store, self.bus = store, bus
        self.node_name, self.node_id = node_name, node_id
        # Called with every local change so the cluster can replicate it.
        self.replicators: list[Callable[[Workload], None]] = []
        store.on_trouble = self._history_trouble
        self._soon: dict[str, tuple[Workload, list[type[JobEvent]]]] = {}  # by job id, in the order told

    def _history_trouble(self, why: str | None) -> None:
        """Said once when history stops being saved, and once when it is saved again."""
        path = self.store.path
        if why is not None:
            message = (f"job history is not being saved: {path} cannot be written ({why}); new records are kept "
                       "in memory and written as soon as the disk takes them")
            log.warning("%s", message)
            self.bus.publish(Notice(title="Job history not saved", message=message, level="warning",
                                    node=self.node_name))
            return
        lost = f"; {self.store.given_up} records over the memory bound were given up" if self.store.given_up else ""
        message = f"job history is saved again in {path}: the records kept meanwhile are written{lost}"
        log.info("%s", message)
        self.bus.publish(Notice(title="Job history saved again", message=message, node=self.node_name))

    def open(self, *, model: str, api: str, requester: Requester, origin_node: str | None = None,
             origin_node_id: str | None = None, job_id: str | None = None, soon: bool = False) -> Workload:
        job = Workload(model=model, api=api, requester=requester,
                       origin_node=origin_node or self.node_name, origin_node_id=origin_node_id or self.node_id)
        if job_id:
            job.id = job_id
        self._tell(job, WorkloadStarted, soon)
        return job

    def running(self, job: Workload, *, serving_node: str, serving_node_id: str, engine: str,
                ttfb_ms: float, off_lan: bool = False, rented_node: str | None = None, soon: bool = False) -> None:
        job.state, job.started_at = "running", job.started_at or time.time()
        job.serving_node, job.serving_node_id, job.engine = serving_node, serving_node_id, engine
        job.ttfb_ms, job.off_lan, job.rented_node = round(ttfb_ms, 2), off_lan, rented_node
        self._tell(job, WorkloadRunning, soon)

    def finish(self, job: Workload, state: str, *, error: str | None = None,
               prompt_tokens: int | None = None, completion_tokens: int | None = None, soon: bool = False) -> None:
        job.state = state  # type: ignore[assignment]
        job.finished_at = time.time()
        if job.started_at is None:
            job.started_at = job.finished_at
        # Kept in state.db and replicated: no credential, whatever shape an upstream wrote it in.
        job.error = redact(error) if error else error
        job.prompt_tokens, job.completion_tokens = prompt_tokens, completion_tokens
        self._tell(job, WorkloadFinished, soon)

    def updated(self, job: Workload) -> None:
        """A finished job learned something more (its cost): store, tell and replicate it."""
        self._changed(job, WorkloadUpdated)

    def _tell(self, job: Workload, kind: type[JobEvent], soon: bool) -> None:
        if not soon:
            self._changed(job, kind)
            return
        pending = self._soon.get(job.id)
        if pending is not None:
            pending[1].append(kind)
            return
        self._soon[job.id] = (job, [kind])
        asyncio.get_running_loop().call_soon(self._tell_pending, job.id)

    def _tell_pending(self, job_id: str) -> None:
        job, kinds = self._soon.pop(job_id, (None, []))
        for kind in kinds:
            assert job is not None
            # Out of the request's own step: a failure here is logged, and costs the request nothing.
            with guarded(f"telling job {job_id}'s change", log):
                self._store_and_tell(job, kind)

    def _changed(self, job: Workload, kind: type[JobEvent]) -> None:
        if job.id in self._soon:
            self._tell_pending(job.id)
        self._store_and_tell(job, kind)

    def _store_and_tell(self, job: Workload, kind: type[JobEvent]) -> None:
        self.store.save(job)
        self.bus.publish(kind(job=job.to_json()))
        for replicate in self.replicators:
            replicate(job)
