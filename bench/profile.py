"""`python -m bench.profile SCENARIO`: py-spy on a node while the load client drives one kind of traffic.

Scenarios: `latency` (sequential short streams), `stream` (one long paced stream),
`concurrent` (--streams paced streams at once, 64 by default). Writes collapsed stacks to
bench/results/profile-SCENARIO.txt (feed them to flamegraph.pl or speedscope) and
prints the functions that hold the most on-CPU samples, inclusive and self.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.harness import REPO, NodeProc, TinyProc, pair
from bench.litellm_proxy import BENCH_VENV
from bench.load import Target, chat_body, closed_loop, make_session, request

MODEL = "tiny:latest"


async def drive(scenario: str, url: str, seconds: float, streams: int = 64) -> int:
    target = Target("pairwise", url)
    deadline = time.perf_counter() + seconds
    count = 0
    if scenario == "concurrent":
        samples = await closed_loop(target, chat_body(MODEL, stream=True, max_tokens=20), streams, seconds)
        return len(samples)
    body = chat_body(MODEL, stream=True, max_tokens=8 if scenario == "latency" else 100_000)
    async with make_session(target) as session:
        while time.perf_counter() < deadline:
            await request(session, body)
            count += 1
    return count


def summarize(collapsed: Path, top: int) -> str:
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack:
            continue
        samples = int(n)
        total += samples
        frames = stack.split(";")
        for frame in set(frames):
            inclusive[frame] += samples
        own[frames[-1]] += samples
    lines = [f"{total} on-CPU samples", "", "inclusive %  function"]
    lines += [f"{100 * n / total:10.1f}  {f}" for f, n in inclusive.most_common(top)]
    lines += ["", "self %       function"]
    lines += [f"{100 * n / total:10.1f}  {f}" for f, n in own.most_common(top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("scenario", choices=["latency", "stream", "concurrent"])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose node is profiled")
    parser.add_argument("--paired", action="store_true", help="pair a second node B with the profiled node A")
    parser.add_argument("--via-peer", action="store_true",
                        help="send the traffic to B, which relays it to A (implies --paired)")
    parser.add_argument("--profile-peer", action="store_true", help="profile B instead of A (implies --via-peer)")
    parser.add_argument("--streams", type=int, default=64, help="streams open at once (concurrent scenario)")
    args = parser.parse_args(argv)
    py_spy = BENCH_VENV / "bin" / "py-spy"
    if not py_spy.exists():
        print(f"py-spy is not in {BENCH_VENV}; run bench/run once to make the bench venv", file=sys.stderr)
        return 2
    out = REPO / "bench" / "results" / f"profile-{args.scenario}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pairwise-profile-"))
    tiny = TinyProc("--api", "openai", "--model", MODEL, "--reply-tokens", "1000000")
    node = NodeProc(work / "node", "profiled", tree=args.tree)
    peer = NodeProc(work / "peer", "peer", tree=args.tree)
    args.via_peer = args.via_peer or args.profile_peer
    try:
        node.start(wait_answer=True)
        node.add_engine("tiny", tiny.url)
        if args.paired or args.via_peer:
            peer.start(wait_answer=True)
            pair(node, peer, MODEL)
        entry = peer if args.via_peer else node
        profiled = peer if args.profile_peer else node
        if args.scenario != "latency":
            tiny.config(tokens_per_s=1000 if args.scenario == "stream" else 20)
        asyncio.run(drive("latency", entry.url, 1.0))  # warm: imports, pools
        spy = subprocess.Popen([str(py_spy), "record", "--pid", str(profiled.pid), "--rate", "1000", "--format", "raw",
                                "--duration", str(int(args.seconds)), "--output", str(out), "--nonblocking"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        done = asyncio.run(drive(args.scenario, entry.url, args.seconds, args.streams))
        _, err = spy.communicate(timeout=60)
        if spy.returncode != 0:
            print(err, file=sys.stderr)
            return 1
        print(f"{args.scenario}: {done} requests in {args.seconds:g} s; collapsed stacks in {out}\n")
        print(summarize(out, args.top))
    finally:
        peer.stop()
        node.stop()
        tiny.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
