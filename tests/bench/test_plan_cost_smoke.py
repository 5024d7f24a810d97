"""The in-process A/B of a request's way before it leaves and of the cap check (``python -m bench.plan_cost``)
runs and reports each figure.

Speed itself is never asserted: the tool prints its figures; this checks that it still works."""

from __future__ import annotations

import subprocess
import sys

from app.harness import REPO

FIGURES = ["validate", "estimate", "plan_for", "check_budget_uncapped", "check_budget_day_cap"]


def test_the_plan_cost_tool_runs_on_this_checkout() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.plan_cost", "--runs", "1", "--requests", "20", "--rounds", "1"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    [line] = result.stdout.splitlines()
    assert line.startswith(f"run 1  {REPO}  load ") and "µs per call:" in line, line
    cells = line.split("µs per call:")[1].split()
    assert cells[::2] == FIGURES, line
    assert all(float(value) > 0 for value in cells[1::2]), line
