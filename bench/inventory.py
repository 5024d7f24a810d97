"""`python -m bench.inventory [--engines 50] [--models-per-engine 20]`: the front door's added time to
first byte as the inventory grows (issue 31's growth row): the same node, the same requested model on
the same engine, first with that one engine, then with 49 more (1,000 models in all). Requests rotate
over direct and the node, so load changes hit both alike; "added" is the node's p50 minus direct's."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from app.harness import NodeProc, TinyProc, wait_until

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


def added_p50(direct: str, node: str, requests: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"direct": [], "node": []}
    with httpx.Client(timeout=30, trust_env=False) as client:
        for _ in range(requests):
            times["direct"].append(first_byte_ms(client, direct))
            times["node"].append(first_byte_ms(client, node))
    direct_p50, node_p50 = statistics.median(times["direct"]), statistics.median(times["node"])
    return {"direct_p50_ms": round(direct_p50, 3), "node_p50_ms": round(node_p50, 3),
            "added_p50_ms": round(node_p50 - direct_p50, 3)}


def measure(engines: int, per_engine: int, requests: int) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix="pairwise-inventory-"))
    tinies: list[TinyProc] = []
    node: NodeProc | None = None
    try:
        target = TinyProc("--api", "openai", "--model", MODEL,
                          *[a for i in range(1, per_engine) for a in ("--model", f"t0-m{i}")])
        tinies.append(target)
        node = NodeProc(work / "node", "inventory").start(wait_answer=True)
        node.add_engine("e0", target.url)
        wait_until(lambda: MODEL in node.models(), what="the target model listed")
        small = added_p50(target.url, node.url, requests)
        for e in range(1, engines):
            tinies.append(TinyProc("--api", "openai", *[a for i in range(per_engine) for a in ("--model", f"t{e}-m{i}")]))
        for e, tiny in enumerate(tinies[1:], start=1):
            node.add_engine(f"e{e}", tiny.url)
        wait_until(lambda: len(node.models()) >= engines * per_engine, what="every model listed", timeout=300)
        large = added_p50(target.url, node.url, requests)
        grown = engines * per_engine - per_engine
        return {"engines": engines, "models": engines * per_engine, "requests": requests,
                "one_engine": small, "all_engines": large,
                "added_per_model_ns": round((large["added_p50_ms"] - small["added_p50_ms"]) / grown * 1e6, 1)}
    finally:
        if node is not None:
            node.stop()
        for tiny in tinies:
            tiny.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engines", type=int, default=50)
    parser.add_argument("--models-per-engine", type=int, default=20)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    print(json.dumps(measure(args.engines, args.models_per_engine, args.requests), indent=1))


if __name__ == "__main__":
    main()
