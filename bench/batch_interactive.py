"""Interactive latency while a batch runs on the same engine (issue 30): measured, never asserted.

    python -m bench.batch_interactive [--requests 40] [--lines 3000]

One tiny engine (50 ms to its first byte, capacity 8) behind a node; the p50 and p95 of sequential
interactive chat requests, idle and then while a batch fills the engine's batch share. The aim is a
ratio within 2x of idle: the batch leaves headroom, so an app's request never queues behind it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import openai

from app.harness import NodeProc, TinyProc, wait_until


def latencies(url: str, count: int) -> list[float]:
    out = []
    with httpx.Client(trust_env=False, timeout=60) as http:
        for i in range(count):
            began = time.perf_counter()
            response = http.post(f"{url}/v1/chat/completions", json={
                "model": "tiny", "messages": [{"role": "user", "content": f"now {i}"}], "max_tokens": 4})
            response.raise_for_status()
            out.append((time.perf_counter() - began) * 1000)
    return out


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_interactive")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--lines", type=int, default=3000)
    args = parser.parse_args()
    tiny = TinyProc("--model", "tiny", "--first-byte-delay-s", "0.05")
    with tempfile.TemporaryDirectory() as tmp:
        node = NodeProc(Path(tmp) / "home", "bench").start(wait_answer=True)
        try:
            node.add_engine("tiny", tiny.url, capacity=8)
            wait_until(lambda: node.control("GET", "/engines")["engines"][0]["models"], 20, "the engine's models")
            idle = latencies(node.url, args.requests)
            path = Path(tmp) / "input.jsonl"
            path.write_text("".join(json.dumps({"custom_id": f"b-{i}", "method": "POST", "url": "/v1/chat/completions",
                                                "body": {"model": "tiny", "messages": [{"role": "user", "content": "x"}],
                                                         "max_tokens": 4}}) + "\n" for i in range(args.lines)))
            client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused")
            with path.open("rb") as fh:
                batch = client.batches.create(input_file_id=client.files.create(file=fh, purpose="batch").id,
                                              endpoint="/v1/chat/completions", completion_window="24h")
            wait_until(lambda: tiny.stats()["in_flight"] >= 5, 30, "the batch to fill its share")
            busy = latencies(node.url, args.requests)
            still = client.batches.retrieve(batch.id).status
            client.batches.cancel(batch.id)
        finally:
            node.stop()
            tiny.stop()
    result = {"idle": summary(idle), "during_batch": summary(busy), "batch_status_after": still,
              "p50_ratio": round(statistics.median(busy) / statistics.median(idle), 2),
              "target": "p50_ratio <= 2.0"}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
