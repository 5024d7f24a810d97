"""Open jobs answer from memory; a stored record never changes its origin node."""

from __future__ import annotations

from pathlib import Path

from app.services.jobs.records import JobState, Workload
from app.services.jobs.requester import Requester
from app.services.jobs.store import JobStore


def job(origin: str, state: JobState = "queued") -> Workload:
    return Workload(model="m", api="openai", requester=Requester(origin, "o"), origin_node="o", origin_node_id=origin,
                    id="job-1", state=state)


def test_open_jobs_are_read_from_memory_until_they_end(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "state.db")
    running = job("node-a")
    store.save(running)
    assert store.open_job("job-1") is running and store.get("job-1") is running
    running.state = "completed"
    store.save(running)
    assert store.open_job("job-1") is None
    store.flush()
    stored = store.get("job-1")
    assert stored is not None and stored.state == "completed" and stored is not running  # from SQLite now
    store.close()


def test_a_record_keeps_its_origin(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "state.db")
    store.save(job("node-a", state="completed"))
    store.flush()
    # Another node reusing the id (a relayed request, or a replicated record) does not replace it.
    store.save(job("node-b", state="failed"))
    store.flush()
    assert not store.upsert(job("node-b", state="running"))
    kept = store.get("job-1")
    assert kept is not None and (kept.origin_node_id, kept.state) == ("node-a", "completed")
    # The same origin still updates its own record.
    assert store.upsert(job("node-a", state="failed"))
    updated = store.get("job-1")
    assert updated is not None and updated.state == "failed"
    store.close()
