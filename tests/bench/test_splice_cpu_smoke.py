"""The splice's in-process CPU A/B (``python -m bench.splice_cpu``) runs and reads its whole stream.

Speed itself is never asserted: the tool prints its figures; this checks that it still works."""

from __future__ import annotations

import subprocess
import sys

from app.harness import REPO


def test_the_in_process_splice_cpu_tool_runs_every_shape() -> None:
    for extra in ([], ["--rename"]):
        result = subprocess.run([sys.executable, "-m", "bench.splice_cpu", "--chunks", "200", "--rounds", "1", *extra],
                                cwd=REPO, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-3000:]
        lines = result.stdout.splitlines()
        assert lines[0].startswith("load average") and f"rename={bool(extra)}" in lines[0]
        assert [line.split()[0] for line in lines[1:]] == ["paced", "unpaced", "spliced"]
        assert all("µs per engine chunk" in line for line in lines[1:])
