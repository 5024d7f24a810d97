"""The job tracker's changes told *soon* (jobs/tracker.py): a request's way to its first byte sets
the record's fields at once and stores, tells and replicates them at the loop's next turn; a change
told now first tells the job's pending ones, so every listener (metrics, the off-LAN notice, the
tray, replication) sees started, running, finished in that order, and the stored record is the
latest. Real store (SQLite in a temporary home) and bus."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.services.events import Event, EventBus, WorkloadFinished, WorkloadRunning, WorkloadStarted
from app.services.jobs.records import Workload
from app.services.jobs.requester import Requester
from app.services.jobs.store import JobStore
from app.services.jobs.tracker import JobTracker

WHO = Requester(node_id="n1", node_name="one")


def tracker(tmp_path: Path) -> tuple[JobTracker, list[str], list[str]]:
    bus = EventBus()
    told: list[str] = []
    replicated: list[str] = []

    def heard(event: Event) -> None:
        if isinstance(event, (WorkloadStarted, WorkloadRunning, WorkloadFinished)):
            told.append(f"{event.kind}:{event.job['state']}")

    bus.on(heard)
    jobs = JobTracker(JobStore(tmp_path / "state.db"), bus, "one", "n1")

    def replicate(job: Workload) -> None:
        replicated.append(job.state)

    jobs.replicators.append(replicate)
    return jobs, told, replicated


async def test_a_change_told_soon_follows_at_the_next_turn(tmp_path: Path) -> None:
    jobs, told, replicated = tracker(tmp_path)
    job = jobs.open(model="m", api="openai", requester=WHO, soon=True)
    assert job.state == "queued" and told == [] and replicated == []
    await asyncio.sleep(0)  # the loop's next turn
    assert told == ["workload_started:queued"] and replicated == ["queued"]
    jobs.running(job, serving_node="one", serving_node_id="n1", engine="e", ttfb_ms=1.5, soon=True)
    assert job.state == "running" and job.serving_node == "one"  # the fields at once, for the answer's headers
    assert len(told) == 1
    await asyncio.sleep(0)
    assert told[-1] == "workload_running:running"
    stored = jobs.store.get(job.id)
    assert stored is not None and stored.state == "running"


async def test_a_change_told_now_tells_the_pending_ones_first(tmp_path: Path) -> None:
    jobs, told, replicated = tracker(tmp_path)
    job = jobs.open(model="m", api="openai", requester=WHO, soon=True)
    jobs.running(job, serving_node="one", serving_node_id="n1", engine="e", ttfb_ms=1.0, soon=True)
    jobs.finish(job, "completed", prompt_tokens=3, completion_tokens=4)  # before the loop turned
    assert [kind.split(":")[0] for kind in told] == ["workload_started", "workload_running", "workload_finished"]
    assert len(replicated) == 3
    await asyncio.sleep(0)
    assert len(told) == 3  # nothing told twice when the turn comes
    stored = jobs.store.get(job.id)
    assert stored is not None and stored.state == "completed" and stored.completion_tokens == 4


async def test_a_whole_answers_finish_told_soon_follows_its_running_at_the_next_turn(tmp_path: Path) -> None:
    # A whole answer is its own first byte: its finish is told once the answer is on its way.
    jobs, told, replicated = tracker(tmp_path)
    job = jobs.open(model="m", api="openai", requester=WHO, soon=True)
    await asyncio.sleep(0)
    jobs.running(job, serving_node="one", serving_node_id="n1", engine="e", ttfb_ms=1.0, soon=True)
    jobs.finish(job, "completed", prompt_tokens=3, completion_tokens=4, soon=True)
    assert job.state == "completed" and job.completion_tokens == 4  # the fields at once (the relay, batches)
    assert told == ["workload_started:queued"]
    await asyncio.sleep(0)
    assert told == ["workload_started:queued", "workload_running:completed", "workload_finished:completed"]
    assert len(replicated) == 3
    stored = jobs.store.get(job.id)
    assert stored is not None and stored.state == "completed" and stored.prompt_tokens == 3


async def test_a_change_told_now_after_a_finish_told_soon_tells_the_finish_first(tmp_path: Path) -> None:
    # Its cost (``updated``) comes after the finish, whenever it comes: no listener counts money before it.
    jobs, told, _ = tracker(tmp_path)
    job = jobs.open(model="m", api="openai", requester=WHO)
    jobs.finish(job, "completed", soon=True)
    jobs.updated(job)
    assert [kind.split(":")[0] for kind in told] == ["workload_started", "workload_finished"]

