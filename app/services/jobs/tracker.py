"""Opens and closes workload records, stores them and tells the event bus."""

from __future__ import annotations

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
             origin_node_id: str | None = None, job_id: str | None = None) -> Workload:
        job = Workload(model=model, api=api, requester=requester,
                       origin_node=origin_node or self.node_name, origin_node_id=origin_node_id or self.node_id)
        if job_id:
            job.id = job_id
        self._changed(job, WorkloadStarted)
        return job

    def running(self, job: Workload, *, serving_node: str, serving_node_id: str, engine: str,
                ttfb_ms: float, off_lan: bool = False, rented_node: str | None = None) -> None:
        job.state, job.started_at = "running", job.started_at or time.time()
        job.serving_node, job.serving_node_id, job.engine = serving_node, serving_node_id, engine
        job.ttfb_ms, job.off_lan, job.rented_node = round(ttfb_ms, 2), off_lan, rented_node
        self._changed(job, WorkloadRunning)

    def finish(self, job: Workload, state: str, *, error: str | None = None,
               prompt_tokens: int | None = None, completion_tokens: int | None = None) -> None:
        job.state = state  # type: ignore[assignment]
        job.finished_at = time.time()
        if job.started_at is None:
            job.started_at = job.finished_at
        # Kept in state.db and replicated: no credential, whatever shape an upstream wrote it in.
        job.error = redact(error) if error else error
        job.prompt_tokens, job.completion_tokens = prompt_tokens, completion_tokens
        self._changed(job, WorkloadFinished)

    def updated(self, job: Workload) -> None:
        """A finished job learned something more (its cost): store, tell and replicate it."""
        self._changed(job, WorkloadUpdated)

    def _changed(self, job: Workload, kind: type[JobEvent]) -> None:
        self.store.save(job)
        self.bus.publish(kind(job=job.to_json()))
        for replicate in self.replicators:
            replicate(job)
