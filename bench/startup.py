"""`python -m bench.startup [--restarts N]`: restart to first answer and idle RSS of `pairwise serve`
alone, the two figures of the start-up row, with more restarts than the full run makes (a median of
N; the first start, which creates the identity, is reported apart). ``--tree DIR`` restarts a node
from another checkout in turn with this one (before/after a change)."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from app.harness import REPO, NodeProc, TinyProc
from bench.readings import rss_mb


def measure(restarts: int, trees: dict[str, Path]) -> dict[str, dict[str, object]]:
    """Each tree's node restarted in turn (interleaved, so load changes hit every tree alike)."""
    work = Path(tempfile.mkdtemp(prefix="pairwise-startup-"))
    tiny = TinyProc("--api", "openai", "--model", "tiny")
    try:
        first_s: dict[str, float] = {}
        times: dict[str, list[float]] = {name: [] for name in trees}
        rss: dict[str, list[float]] = {name: [] for name in trees}
        for name, tree in trees.items():
            first = NodeProc(work / name, "startup", tree=tree).start(wait_answer=True)
            first.add_engine("tiny", tiny.url)
            first_s[name] = first.startup_s
            first.stop()
        for _ in range(restarts):
            for name, tree in trees.items():
                node = NodeProc(work / name, "startup", tree=tree).start(wait_answer=True)
                times[name].append(node.startup_s)
                time.sleep(0.5)  # as the full run: start-up work settles before idle memory is read
                rss[name].append(rss_mb(node.pid))
                node.stop()
        return {name: {"first_start_s": round(first_s[name], 3), "restart_s": [round(t, 3) for t in times[name]],
                       "startup_s": round(statistics.median(times[name]), 3),
                       "idle_rss_mb": round(statistics.median(rss[name]), 1)} for name in trees}
    finally:
        tiny.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="also restart a node from this checkout, interleaved (A/B)")
    args = parser.parse_args()
    trees = {"this": REPO, **{f"tree{i}": tree for i, tree in enumerate(args.tree)}}
    print(json.dumps(measure(args.restarts, trees), indent=1))


if __name__ == "__main__":
    main()
