"""`python -m bench.warm_peers [--before DIR]`: a burst of 256 relayed streams over two hops, against direct.

The concurrency phase of ``bench/run`` for two paths only, direct (client -> tiny) and two hops
(client -> node B -> mutual TLS -> node A -> tiny), interleaved level by level (1, 16, 64, 256
streams, each a closed loop of paced streams), then a second burst of 256 within the keep-alive of
the first (what "warm peers" keeps). For each burst: p99 time to first byte on both paths and their
ratio, errors, and the TLS handshakes node B's relay did to A during it, full or resumed (from B's
``GET /peers``: ``relay_pool``; a tree without the warm pool has no such counts). ``--before DIR``
adds a second pair of nodes from another checkout (main before a change), measured interleaved
with this one's, burst by burst, so both see the same machine load.
Raw figures go to ``bench/results/warm-peers.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from app.harness import REPO, NodeProc, TinyProc, pair
from bench.load import Target, chat_body, closed_loop
from bench.stats import ms, percentile

MODEL = "tiny:latest"
LEVELS = (1, 16, 64, 256)


def log(message: str) -> None:
    print(f"[warm-peers {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def handshakes(node_b: NodeProc) -> tuple[int, int] | None:
    """(full, resumed) handshakes node B's relay did to its one peer so far; None: not counted there."""
    peers = node_b.control("GET", "/peers").get("peers") or []
    pool = peers[0].get("relay_pool") if peers else None
    return (int(pool["handshakes_full"]), int(pool["handshakes_resumed"])) if isinstance(pool, dict) else None


def burst(target: Target, body: dict[str, Any], level: int, duration_s: float) -> dict[str, Any]:
    samples = asyncio.run(closed_loop(target, body, level, duration_s))
    ok = [s.ttfb_s for s in samples if s.ok]
    errors = [s.error for s in samples if not s.ok]
    return {"requests": len(samples), "errors": len(errors), "first_error": errors[0] if errors else None,
            "p50_ttfb_ms": ms(percentile(ok, 50)) if ok else None,
            "p99_ttfb_ms": ms(percentile(ok, 99)) if ok else None}


def start_pair(stack: ExitStack, work: Path, tag: str, tree: Path, tiny: TinyProc) -> NodeProc:
    """Node A (tiny as its engine) and node B paired with it, from ``tree``; returns B."""
    node_a = NodeProc(work / f"{tag}-a", f"{tag}-a", tree=tree)
    stack.callback(node_a.stop)
    node_a.start(wait_answer=True)
    node_a.add_engine("tiny", tiny.url)
    node_b = NodeProc(work / f"{tag}-b", f"{tag}-b", tree=tree)
    stack.callback(node_b.stop)
    node_b.start(wait_answer=True)
    log(f"pairing two nodes from {tree}")
    pair(node_a, node_b, MODEL)
    return node_b


def run(tree: Path, before: Path | None, duration_s: float, gap_s: float) -> dict[str, Any]:
    raw: dict[str, Any] = {"tree": str(tree), "before": str(before) if before else None, "duration_s": duration_s,
                           "loadavg_at_start": os.getloadavg(),
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    work = Path(tempfile.mkdtemp(prefix="pairwise-warm-"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        tiny = TinyProc("--api", "openai", "--model", MODEL, "--reply-tokens", "1000000")
        stack.callback(tiny.stop)
        relays = {"pairwise_2hop": start_pair(stack, work, "after", tree, tiny)}
        if before is not None:
            relays["before_2hop"] = start_pair(stack, work, "before", before, tiny)
        paths = {"direct": Target("direct", tiny.url)}
        paths.update({name: Target(name, node.url) for name, node in relays.items()})
        tiny.config(tokens_per_s=20)
        body = chat_body(MODEL, stream=True, max_tokens=20)  # 20 chunks at 20 tokens/s, as bench/run's phase
        rows: list[dict[str, Any]] = []
        plan = [(level, f"{level} streams") for level in LEVELS] + [(256, "256 streams again (warm)")]
        try:
            for level, label in plan:
                if label.endswith("(warm)"):
                    time.sleep(gap_s)  # a pause between bursts, shorter than the pool's keep-alive
                row: dict[str, Any] = {"label": label, "level": level}
                for name, target in paths.items():
                    node = relays.get(name)
                    before_count = handshakes(node) if node is not None else None
                    row[name] = burst(target, body, level, duration_s)
                    after_count = handshakes(node) if node is not None else None
                    if before_count is not None and after_count is not None:
                        row[name]["handshakes_full"] = after_count[0] - before_count[0]
                        row[name]["handshakes_resumed"] = after_count[1] - before_count[1]
                direct = row["direct"]["p99_ttfb_ms"]
                for name in relays:
                    relayed = row[name]["p99_ttfb_ms"]
                    row[name]["x_direct"] = round(relayed / direct, 2) if direct and relayed else None
                    log(f"{label}, {name}: direct p99 {direct} ms, 2 hops {relayed} ms ({row[name]['x_direct']}x), "
                        f"errors {row[name]['errors']}, handshakes {row[name].get('handshakes_full', '-')} full / "
                        f"{row[name].get('handshakes_resumed', '-')} resumed")
                rows.append(row)
        finally:
            tiny.config(tokens_per_s=0.0)
        raw["rows"] = rows
        raw["relays"] = list(relays)
    raw["loadavg_at_end"] = os.getloadavg()
    return raw


def table(raw: dict[str, Any]) -> str:
    lines = ["| burst | path | direct p99 (ms) | 2 hops p99 (ms) | × direct | errors (2 hops + direct) "
             "| handshakes full / resumed |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in raw["rows"]:
        for name in raw["relays"]:
            relayed = row[name]
            shakes = (f"{relayed['handshakes_full']} / {relayed['handshakes_resumed']}"
                      if "handshakes_full" in relayed else "–")
            lines.append(f"| {row['label']} | {name} | {row['direct']['p99_ttfb_ms']} | {relayed['p99_ttfb_ms']} | "
                         f"{relayed['x_direct']} | {relayed['errors']} + {row['direct']['errors']} | {shakes} |")
    start, end = raw["loadavg_at_start"][0], raw["loadavg_at_end"][0]
    lines.append(f"\nload average {start:.2f} at start, {end:.2f} at end; tree {raw['tree']}, before {raw['before']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.warm_peers", description=__doc__)
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout both nodes run (default: this one)")
    parser.add_argument("--before", type=Path, help="also a pair of nodes from this checkout, interleaved (A/B)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per burst and path (bench/run: 5)")
    parser.add_argument("--gap", type=float, default=20.0, help="seconds between the two bursts of 256")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "warm-peers.json")
    args = parser.parse_args(argv)
    raw = run(args.tree.resolve(), args.before.resolve() if args.before else None, args.duration, args.gap)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(raw, indent=2) + "\n")
    print(table(raw))
    print(f"raw figures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
