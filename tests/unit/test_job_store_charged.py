"""The spend rebuilt at start reads only the records that carry a cost, through the partial index
``workloads_charged`` (a long history's start-up was spent scanning every recent job for them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.services.jobs.records import Workload
from app.services.jobs.requester import Requester
from app.services.jobs.store import CHARGED, JobStore


def record(number: int, cost: float | None, created_at: float) -> Workload:
    made = Workload(model="m", api="openai", requester=Requester("node-a", "o"), origin_node="o",
                    origin_node_id="node-a", id=f"job-{number}", state="completed", cost_usd=cost)
    made.created_at = created_at
    return made


def test_charged_since_returns_the_costed_records_in_order_through_the_partial_index(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = JobStore(path)
    costs = [None, 0.0, 0.25, None, 0.5, 0.0, 1.0]
    for number, cost in enumerate(costs):
        store.save(record(number, cost, created_at=1000.0 + number))
    store.flush()
    charged = store.charged_since(1001.5)
    assert [(w.id, w.cost_usd) for w in charged] == [("job-2", 0.25), ("job-4", 0.5), ("job-6", 1.0)]
    assert [w.id for w in store.charged_since(1003.0)] == ["job-4", "job-6"]
    store.close()

    db = sqlite3.connect(path)
    plan = " ".join(str(row) for row in db.execute(
        f"EXPLAIN QUERY PLAN SELECT record FROM workloads WHERE created_at >= ? AND {CHARGED} ORDER BY created_at",
        (0.0,)))
    db.close()
    assert "workloads_charged" in plan, plan


def test_an_existing_history_gains_the_index_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = JobStore(path)
    store.save(record(1, 0.5, created_at=1000.0))
    store.flush()
    store.close()
    db = sqlite3.connect(path)
    db.execute("DROP INDEX workloads_charged")  # a history written before the index existed
    db.commit()
    db.close()
    reopened = JobStore(path)
    assert [w.id for w in reopened.charged_since(0.0)] == ["job-1"]
    reopened.close()
    db = sqlite3.connect(path)
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    assert "workloads_charged" in names
