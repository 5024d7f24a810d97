"""`python -m bench [--quick]`: run every phase once and print the side-by-side table.

Writes the raw figures to bench/results/latest.json (git-ignored). See bench/README.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from app.harness import REPO, NodeProc, TinyProc, pair
from app.services.eventloop import loop_name
from bench import aiohttp_floor, growth_rows, litellm_proxy, nginx_proxy, phases, splice_floor, targets, wan
from bench.load import Target
from bench.readings import rss_mb
from bench.report import headline, table

MODEL = "tiny:latest"
RESULTS = REPO / "bench" / "results"


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return {
        "uname": " ".join(platform.uname()), "nproc": os.cpu_count(), "python": platform.python_version(),
        "loadavg_at_start": os.getloadavg(), "git_head": head.stdout.strip(), "node_loop": loop_name(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def start_node(stack: ExitStack, home: Path, name: str, tree: Path = REPO,
               env: dict[str, str] | None = None) -> NodeProc:
    node = NodeProc(home, name, tree=tree, env=env)
    stack.callback(node.stop)
    return node.start(wait_answer=True)


def scrape_metrics(node: NodeProc) -> dict[str, float]:
    """One scrape of node A's /metrics after the run: what it counted, the text's size and the scrape's time."""
    token = (node.home / "control_token").read_text(encoding="utf-8").strip()
    began = time.perf_counter()
    answer = httpx.get(f"{node.url}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=30, trust_env=False)
    took_ms = (time.perf_counter() - began) * 1000
    answer.raise_for_status()
    counted = sum(float(line.rsplit(" ", 1)[1]) for line in answer.text.splitlines()
                  if line.startswith("pairwise_requests_total{"))
    return {"requests_counted": counted, "bytes": len(answer.content), "scrape_ms": round(took_ms, 2)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    settings = {"smoke": phases.SMOKE, "quick": phases.QUICK, "full": phases.FULL}[mode]
    if args.requests:
        settings = dataclasses.replace(settings, latency_requests=args.requests)
    raw: dict[str, Any] = {"mode": mode, "machine": machine(), "notes": []}
    work = Path(tempfile.mkdtemp(prefix="pairwise-bench-"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        log("starting the tiny model server")
        tiny = TinyProc("--api", "openai", "--model", MODEL, "--reply-tokens", "1000000")
        stack.callback(tiny.stop)

        # Start-up: a first start makes the identity; the figure that counts is a restart with an engine.
        log("node start-up (first start, then restarts with one engine)")
        first = start_node(stack, work / "node-a", "bench-a")
        first.add_engine("tiny", tiny.url)
        first.stop()
        restarts = []
        for _ in range(2 if mode == "full" else 0):
            again = start_node(stack, work / "node-a", "bench-a")
            restarts.append(again.startup_s)
            again.stop()
        node_a = start_node(stack, work / "node-a", "bench-a")  # this restart is measured too, and stays up
        restarts.append(node_a.startup_s)
        time.sleep(0.5)  # let start-up work (model list fetch, timers) settle before reading idle memory
        raw["node"] = {"first_start_s": round(first.startup_s, 3), "restart_s": [round(s, 3) for s in restarts],
                       "startup_s": round(sorted(restarts)[len(restarts) // 2], 3),
                       "idle_rss_mb": rss_mb(node_a.pid)}

        lite: litellm_proxy.LiteLLM | None = None
        if args.no_litellm:
            raw["notes"].append("LiteLLM skipped (--no-litellm)")
        elif not litellm_proxy.available():
            raw["notes"].append(f"LiteLLM skipped: no bench venv at {litellm_proxy.BENCH_VENV} (bench/run makes it)")
        else:
            log("launching LiteLLM's proxy (it starts while node B is paired)")
            lite = litellm_proxy.LiteLLM(work / "litellm", tiny.url, MODEL).launch()
            stack.callback(lite.stop)

        node_b: NodeProc | None = None
        if args.no_two_hops:
            raw["notes"].append("two hops skipped (--no-two-hops)")
        else:
            log("pairing node B with node A")
            node_b = start_node(stack, work / "node-b", "bench-b")
            began = time.perf_counter()
            pair(node_a, node_b, MODEL)
            raw["pairing_s"] = round(time.perf_counter() - began, 2)
            log(f"paired in {raw['pairing_s']} s")

        if lite is not None:
            lite.wait_ready()
            time.sleep(0.5)
            raw["litellm_proc"] = {"version": litellm_proxy.version(), "startup_s": round(lite.startup_s, 3),
                                   "idle_rss_mb": rss_mb(lite.pid, tree=True)}
            log(f"LiteLLM {raw['litellm_proc']['version']} answered after {lite.startup_s:.1f} s")

        paths: dict[str, phases.Path] = {"direct": phases.Path(Target("direct", tiny.url))}
        if args.no_nginx:
            raw["notes"].append("nginx skipped (--no-nginx)")
        elif nginx_proxy.binary() is None:
            raw["notes"].append("nginx skipped: not installed (bench/run installs the distribution's package "
                                "where it can: apt-get install nginx-light)")
        else:
            ngx = nginx_proxy.Nginx(work / "nginx", tiny.url)
            stack.callback(ngx.stop)
            ngx.start()
            raw["nginx_proc"] = {"version": nginx_proxy.version()}
            paths["nginx"] = phases.Path(Target("nginx", ngx.url), [ngx.pid], tree=True)
        if args.no_floor:
            raw["notes"].append("aiohttp floor skipped (--no-floor)")
        else:
            floor = aiohttp_floor.FloorRelay(tiny.url, work / "floor.log")
            stack.callback(floor.stop)
            floor.start()
            paths["aiohttp_floor"] = phases.Path(Target("aiohttp_floor", floor.url), [floor.pid])
            splice = splice_floor.SpliceRelay(tiny.url, work / "splice.log")
            stack.callback(splice.stop)
            splice.start()
            paths["splice_floor"] = phases.Path(Target("splice_floor", splice.url), [splice.pid])
        paths["pairwise"] = phases.Path(Target("pairwise", node_a.url), [node_a.pid])
        if node_b is not None:
            paths["pairwise_2hop"] = phases.Path(Target("pairwise_2hop", node_b.url), [node_b.pid, node_a.pid])
        if args.candidate is not None:
            # The same node from another checkout (a patch under test), measured interleaved with this one.
            log(f"starting a candidate node from {args.candidate}")
            cand = start_node(stack, work / "node-c", "bench-c", tree=args.candidate)
            cand.add_engine("tiny", tiny.url)
            paths["candidate"] = phases.Path(Target("candidate", cand.url), [cand.pid])
            raw["candidate"] = {"tree": str(args.candidate), "startup_s": round(cand.startup_s, 3)}
            if node_b is not None:  # the candidate gets its own peer, so both clusters look alike
                cand_b = start_node(stack, work / "node-cb", "bench-cb", tree=args.candidate)
                pair(cand, cand_b, MODEL)
                paths["candidate_2hop"] = phases.Path(Target("candidate_2hop", cand_b.url), [cand_b.pid, cand.pid])
        if args.metrics_off:
            # The same node counting nothing for /metrics, interleaved with the one that counts (issue 31).
            log("starting a node with PAIRWISE_METRICS=off")
            quiet = start_node(stack, work / "node-m", "bench-m", env={"PAIRWISE_METRICS": "off"})
            quiet.add_engine("tiny", tiny.url)
            paths["metrics_off"] = phases.Path(Target("metrics_off", quiet.url), [quiet.pid])
        if lite is not None:
            paths["litellm"] = phases.Path(Target("litellm", lite.url, {"Authorization": f"Bearer {lite.key}"}),
                                           [lite.pid], tree=True)

        raw["paths"] = list(paths)
        if "latency" in args.phases:
            log(f"time to first byte: {settings.latency_requests} sequential requests per path and mode")
            raw["latency"] = phases.latency(paths, MODEL, settings)
        if "throughput" in args.phases:
            log("streaming throughput, paced like a fast engine")
            raw["throughput_paced"] = phases.throughput(paths, tiny, MODEL, settings, paced=True)
            log("streaming throughput, unpaced (the router is the bottleneck)")
            raw["throughput_unpaced"] = phases.throughput(paths, tiny, MODEL, settings, paced=False)
        if "concurrency" in args.phases:
            log(f"concurrent streams {settings.levels}")
            raw["concurrency"] = phases.concurrency(paths, tiny, MODEL, settings)
            if "litellm" in paths and settings.litellm_max_streams:
                raw["notes"].append(f"LiteLLM's concurrency stops at {settings.litellm_max_streams} streams "
                                    "in a short run (a full run takes it to every level)")
        raw["node"]["rss_after_load_mb"] = rss_mb(node_a.pid)
        raw["metrics_scrape"] = scrape_metrics(node_a)
        if lite is not None:
            raw["litellm_proc"]["rss_after_load_mb"] = rss_mb(lite.pid, tree=True)
    if "wan" in args.phases:
        # After the other paths are down: its own node, namespace and far endpoint (bench/wan.py).
        log("the rented link at 40 ms RTT (a network namespace; root only)")
        work_wan = Path(tempfile.mkdtemp(prefix="pairwise-wan-"))
        try:
            raw["wan"] = wan.measure({"smoke": wan.SMOKE, "quick": wan.QUICK, "full": wan.FULL}[mode], work_wan)
        finally:
            shutil.rmtree(work_wan, ignore_errors=True)
        if "skipped" in raw["wan"]:
            raw["notes"].append(f"rented link skipped: {raw['wan']['skipped']}")
    elif mode != "full":
        raw["notes"].append("rented link at 40 ms RTT left out of short runs (--phases ...,wan, or python -m bench.wan)")
    if args.growth or (mode == "full" and not args.no_growth):
        # After the side-by-side phases and with their processes gone: each row starts its own.
        raw["growth"] = growth_rows.run(growth_rows.SMOKE if mode == "smoke" else growth_rows.FULL, log, raw["notes"])
    elif mode != "smoke":
        raw["notes"].append("growth rows skipped (a full run makes them; --growth adds them to a quick run)")
    raw["machine"]["loadavg_at_end"] = os.getloadavg()
    return raw


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run (under a minute)")
    parser.add_argument("--smoke", action="store_true", help="every phase once, tiny (for the smoke test)")
    parser.add_argument("--no-litellm", action="store_true", help="leave LiteLLM out")
    parser.add_argument("--no-nginx", action="store_true", help="leave nginx out")
    parser.add_argument("--no-floor", action="store_true",
                        help="leave out the floors (bare relays on a node's own libraries, and a protocol splice)")
    parser.add_argument("--no-two-hops", action="store_true", help="leave the two-hop relay out")
    parser.add_argument("--phases", type=lambda v: set(v.split(",")), default=None,
                        help="comma-separated subset of latency,throughput,concurrency,wan (default: all; "
                             "--quick and --smoke leave wan out)")
    parser.add_argument("--requests", type=int, help="sequential requests per path and mode for the TTFB rows")
    parser.add_argument("--metrics-off", action="store_true",
                        help="also run a node with PAIRWISE_METRICS=off (what /metrics costs, side by side)")
    parser.add_argument("--candidate", type=Path, help="also run a node from this checkout (A/B a patch)")
    parser.add_argument("--no-growth", action="store_true",
                        help="leave out the growth rows (job history, inventory, peers, affinity) of a full run")
    parser.add_argument("--growth", action="store_true", help="make the growth rows in a quick or smoke run too")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json", help="where the raw JSON goes")
    args = parser.parse_args(argv)
    # A SIGTERM unwinds like Ctrl-C, so every process, temp dir and the rented link's namespace come down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.phases is None:
        args.phases = {"latency", "throughput", "concurrency"} | (set() if args.quick or args.smoke else {"wan"})
    began = time.perf_counter()
    raw = run(args)
    raw["duration_s"] = round(time.perf_counter() - began, 1)
    raw["targets"] = targets.evaluate(raw)
    if args.candidate is not None:
        raw["targets_candidate"] = targets.evaluate(raw, prefix="candidate")
    result = {**headline(raw), **raw}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(raw))
    print()
    if "wan" in raw:
        print()
        print(wan.table(raw["wan"]))
    print()
    print(targets.summary(raw["targets"]))
    if "growth" in raw:
        print()
        print(growth_rows.lines(raw["growth"]))
    for note in raw["notes"]:
        print(f"note: {note}")
    m = raw["machine"]
    print(f"\n{raw['mode']} run in {raw['duration_s']} s on {m['uname']}; {m['nproc']} cores; Python {m['python']}; "
          f"load average {m['loadavg_at_start'][0]:.2f} at start, {m['loadavg_at_end'][0]:.2f} at end")
    print(f"raw figures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
