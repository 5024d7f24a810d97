"""The benchmark runs end to end in its tiniest mode (no LiteLLM) and writes the agreed JSON.

Speed itself is never asserted here: bench/ prints ratios, tests only check that it works.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.harness import REPO

TOP_LEVEL = ("p50_added_per_hop_ms", "p50_added_two_hops_ms", "stream_throughput_pct_of_direct", "cpu_us_per_chunk",
             "errors_at_256_streams", "idle_rss_mb", "litellm")


def test_smoke_run_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "smoke.json"
    result = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--no-litellm", "--out", str(out)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Pairwise 1 hop" in result.stdout and "PW÷direct" in result.stdout
    data = json.loads(out.read_text())
    for key in TOP_LEVEL:
        assert key in data, key
    assert data["litellm"] is None and any("LiteLLM skipped" in n for n in data["notes"])
    # Pass/fail fields for every target, whatever this run measured (a smoke run meets few of them).
    assert data["targets"] and all(set(t) >= {"value", "target", "met"} for t in data["targets"].values())
    assert data["targets"]["idle_rss_mb"]["value"] == data["idle_rss_mb"]
    if "nginx" in data["paths"]:  # the distribution's nginx, where it is installed
        assert data["throughput_paced"]["nginx"]["errors"] == []
    else:
        assert any("nginx skipped" in n for n in data["notes"])
    assert isinstance(data["p50_added_per_hop_ms"], float)
    # /proc counts CPU in 10 ms ticks: a smoke run's 50 chunks may cost less than one.
    assert isinstance(data["cpu_us_per_chunk"], float) and data["cpu_us_per_chunk"] >= 0 and data["idle_rss_mb"] > 0
    # The floors: a bare relay on a node's own libraries, and a protocol-level splice.
    for path in ("direct", "aiohttp_floor", "splice_floor", "pairwise"):
        assert data["latency"]["stream"][path]["errors"] == 0
        assert data["latency"]["nonstream"][path]["errors"] == 0
        assert data["throughput_paced"][path]["errors"] == []
        assert all(data["concurrency"][level][path]["errors"] == 0 for level in ("1", "4"))
    assert isinstance(data["p50_added_two_hops_ms"], float)
    assert data["latency"]["stream"]["pairwise_2hop"]["errors"] == 0
