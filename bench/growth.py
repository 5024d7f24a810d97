"""`python -m bench.growth [--records N]`: what a node's job history costs as it grows (issue 31's growth
row). A node's state.db is filled with N finished workload records (the store's own schema and upsert,
records shaped like a served chat), then the node is restarted and measured: restart to first answer,
`pairwise jobs` (GET /_pairwise/v1/jobs, the latest 50) p50 and p99 over 100 calls, state.db's size,
and each per record against an empty history (the same node before the fill)."""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from app.harness import NodeProc, TinyProc
from app.services.jobs.records import Workload
from app.services.jobs.requester import local_app
from app.services.jobs.store import _UPSERT

BATCH = 10_000


def fill(db: Path, records: int, node_id: str) -> None:
    """N records as the tracker would have written them, in transactions of BATCH."""
    con = sqlite3.connect(db)
    began = time.time() - records  # one a second, oldest first
    try:
        for start in range(0, records, BATCH):
            rows = []
            for i in range(start, min(start + BATCH, records)):
                job = Workload(model="tiny:latest", api="openai", origin_node="growth", origin_node_id=node_id,
                               requester=local_app(node_id, "growth", "bench"))
                job.created_at = job.started_at = began + i
                job.finished_at = job.updated_at = began + i + 0.5
                job.state, job.serving_node, job.serving_node_id, job.engine = "completed", "growth", node_id, "tiny"
                job.ttfb_ms, job.prompt_tokens, job.completion_tokens = 1.2, 12, 40
                job.route = "only copy: tiny"
                rows.append((job.id, job.created_at, job.state, job.updated_at, json.dumps(job.to_json())))
            con.executemany(_UPSERT, rows)
            con.commit()
    finally:
        con.close()


def jobs_latency(node: NodeProc, calls: int) -> tuple[float, float]:
    token = (node.home / "control_token").read_text(encoding="utf-8").strip()
    times = []
    with httpx.Client(base_url=node.url, headers={"Authorization": f"Bearer {token}"}, trust_env=False) as client:
        for _ in range(calls):
            began = time.perf_counter()
            client.get("/_pairwise/v1/jobs", params={"limit": 50}).raise_for_status()
            times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def db_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.glob("state.db*"))


def measure(records: int, calls: int) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix="pairwise-growth-"))
    tiny = TinyProc("--api", "openai", "--model", "tiny")
    try:
        home = work / "node"
        node = NodeProc(home, "growth").start(wait_answer=True)
        node.add_engine("tiny", tiny.url)
        node_id = str(node.control("GET", "/status")["id"])
        node.stop()
        empty = NodeProc(home, "growth").start(wait_answer=True)
        empty_p50, empty_p99 = jobs_latency(empty, calls)
        empty_start, empty_db = empty.startup_s, db_bytes(home)
        empty.stop()
        began = time.perf_counter()
        fill(home / "state.db", records, node_id)
        fill_s = time.perf_counter() - began
        full = NodeProc(home, "growth").start(wait_answer=True)
        full_p50, full_p99 = jobs_latency(full, calls)
        full_start, full_db = full.startup_s, db_bytes(home)
        full.stop()
        return {
            "records": records, "fill_s": round(fill_s, 1),
            "jobs_p50_ms": {"empty": round(empty_p50, 2), "full": round(full_p50, 2)},
            "jobs_p99_ms": {"empty": round(empty_p99, 2), "full": round(full_p99, 2)},
            "startup_s": {"empty": round(empty_start, 3), "full": round(full_start, 3)},
            "state_db_mb": {"empty": round(empty_db / 1e6, 2), "full": round(full_db / 1e6, 1)},
            "per_record": {"state_db_bytes": round((full_db - empty_db) / records, 1),
                           "startup_us": round((full_start - empty_start) / records * 1e6, 3),
                           "jobs_p50_ns": round((full_p50 - empty_p50) / records * 1e6, 3)},
        }
    finally:
        tiny.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    print(json.dumps(measure(args.records, args.calls), indent=1))


if __name__ == "__main__":
    main()
