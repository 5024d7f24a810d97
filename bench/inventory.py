"""`python -m bench.inventory [--engines 50] [--models-per-engine 20]`: the front door's added time to
first byte as the inventory grows (issue 31's growth row): the same node, the same requested model on
the same engine, first with that one engine, then with 49 more (1,000 models in all). Requests rotate
over direct and the node, so load changes hit both alike; "added" is the node's p50 minus direct's.
``--tree DIR`` adds a node from another checkout (before/after a change), served by the same engines and
asked in the same rotation."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterable
from functools import partial
from pathlib import Path

import httpx

from app.harness import REPO, NodeProc, TinyProc, wait_until
from bench.readings import cpu_seconds

MODEL = "tiny:latest"
BODY = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


def first_byte_ms(client: httpx.Client, url: str) -> float:
    began = time.perf_counter()
    took = 0.0
    with client.stream("POST", f"{url}/v1/chat/completions", json=BODY) as answer:
        answer.raise_for_status()
        for _ in answer.iter_raw():
            took = took or (time.perf_counter() - began) * 1000
    return took


def added_p50(direct: str, nodes: dict[str, NodeProc], requests: int) -> dict[str, dict[str, float]]:
    """Each node's p50 and its p50 minus direct's, the requests rotating over direct and every node."""
    times: dict[str, list[float]] = {"direct": [], **{name: [] for name in nodes}}
    cpu = {name: cpu_seconds(node.pid) for name, node in nodes.items()}
    with httpx.Client(timeout=30, trust_env=False) as client:
        for _ in range(requests):
            times["direct"].append(first_byte_ms(client, direct))
            for name, node in nodes.items():
                times[name].append(first_byte_ms(client, node.url))
    cpu = {name: cpu_seconds(node.pid) - cpu[name] for name, node in nodes.items()}
    direct_p50 = statistics.median(times["direct"])
    # CPU per request (the node's own, background polls included) is less hostage to the machine's load.
    return {name: {"direct_p50_ms": round(direct_p50, 3), "node_p50_ms": round(statistics.median(times[name]), 3),
                   "added_p50_ms": round(statistics.median(times[name]) - direct_p50, 3),
                   "node_cpu_us_per_request": round(cpu[name] / requests * 1e6, 1)} for name in nodes}


def listing(nodes: Iterable[NodeProc], models: int) -> None:
    for node in nodes:
        wait_until(partial(lambda n, m: len(n.models()) >= m, node, models), what="every model listed", timeout=300)


def measure(engines: int, per_engine: int, requests: int, trees: dict[str, Path] | None = None) -> dict[str, object]:
    trees = trees or {"this": REPO}
    work = Path(tempfile.mkdtemp(prefix="pairwise-inventory-"))
    tinies: list[TinyProc] = []
    nodes: dict[str, NodeProc] = {}
    try:
        target = TinyProc("--api", "openai", "--model", MODEL,
                          *[a for i in range(1, per_engine) for a in ("--model", f"t0-m{i}")])
        tinies.append(target)
        for name, tree in trees.items():
            nodes[name] = NodeProc(work / name, f"inventory-{name}", tree=tree).start(wait_answer=True)
            nodes[name].add_engine("e0", target.url)
        listing(nodes.values(), per_engine)
        loads = [round(os.getloadavg()[0], 2)]
        small = added_p50(target.url, nodes, requests)
        for e in range(1, engines):
            tinies.append(TinyProc("--api", "openai", *[a for i in range(per_engine) for a in ("--model", f"t{e}-m{i}")]))
        for node in nodes.values():
            for e, tiny in enumerate(tinies[1:], start=1):
                node.add_engine(f"e{e}", tiny.url)
        listing(nodes.values(), engines * per_engine)
        loads.append(round(os.getloadavg()[0], 2))
        large = added_p50(target.url, nodes, requests)
        loads.append(round(os.getloadavg()[0], 2))
        grown = max(engines * per_engine - per_engine, 1)
        return {"engines": engines, "models": engines * per_engine, "requests": requests, "loadavg": loads,
                **{name: {"one_engine": small[name], "all_engines": large[name],
                          "added_per_model_ns": round((large[name]["added_p50_ms"] - small[name]["added_p50_ms"])
                                                      / grown * 1e6, 1),
                          "cpu_per_model_ns": round((large[name]["node_cpu_us_per_request"]
                                                     - small[name]["node_cpu_us_per_request"]) / grown * 1e3, 1)}
                   for name in nodes}}
    finally:
        for node in nodes.values():
            node.stop()
        for tiny in tinies:
            tiny.stop()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engines", type=int, default=50)
    parser.add_argument("--models-per-engine", type=int, default=20)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="also a node from this checkout, in the same rotation (before/after)")
    args = parser.parse_args(argv)
    trees = {"this": REPO, **{f"tree{i}": tree for i, tree in enumerate(args.tree)}}
    print(json.dumps(measure(args.engines, args.models_per_engine, args.requests, trees), indent=1))


if __name__ == "__main__":
    main()
