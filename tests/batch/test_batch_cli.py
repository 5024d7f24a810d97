"""`pairwise batch plan|run|list|show|results|cancel|delete` against a running node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.batch.support import chat_lines, wait_engines, write_input


def test_plan_run_show_results_delete(node_factory: Any, tiny_factory: Any, tmp_path: Path) -> None:
    tiny = tiny_factory("--model", "tiny", "--first-byte-delay-s", "0.02")
    node = node_factory("cli").start(wait_answer=True)
    node.add_engine("tiny", tiny.url, capacity=4)
    wait_engines(node, "tiny")
    path = write_input(tmp_path, [*chat_lines(30, model="other"), b"not json"])

    plan = node.cli_json("batch", "plan", str(path), "--model", "tiny", "--deadline", "2h")
    assert plan["lines"] == 30 and plan["bad_lines"] == 1 and plan["model"] == "tiny"
    assert plan["completion_tokens"] == 30 * 4 and plan["prompt_tokens"] > 0  # each line asks for 4 tokens
    assert [c["copy"] for c in plan["copies"]] == ["tiny"] and plan["copies"][0]["measured_by"] == "probe"
    assert plan["lines_per_s"] > 0 and plan["meets_deadline"] is True and plan["rent"] is None
    text = node.cli("batch", "plan", str(path), "--model", "tiny").stdout
    assert "30 requests to tiny" in text and "lines/s" in text

    run = node.cli("batch", "run", str(path), "--model", "tiny", "--budget-usd", "1", timeout=120)
    assert "completed" in run.stdout and "[" in run.stderr and "lines/s" in run.stderr and "ETA" in run.stderr
    batch_id = run.stdout.split()[0]
    shown = node.cli_json("batch", "show", batch_id)
    assert shown["status"] == "completed" and shown["request_counts"] == {"total": 31, "completed": 30, "failed": 1}
    assert shown["metadata"]["budget_usd"] == "1.0" and shown["metadata"]["cost_usd"] == "0.0000"
    assert shown["pairwise"]["copies"][0]["copy"] == "tiny" and shown["pairwise"]["copies"][0]["done"] == 30
    assert [b["id"] for b in node.cli_json("batch", "list")] == [batch_id]
    out = [json.loads(line) for line in node.cli("batch", "results", batch_id).stdout.splitlines()]
    assert sorted(line["custom_id"] for line in out) == sorted(f"req-{i}" for i in range(30))
    assert all(line["response"]["body"]["model"] == "tiny" for line in out)
    errors = [json.loads(line) for line in node.cli("batch", "results", batch_id, "--errors").stdout.splitlines()]
    assert [e["error"]["code"] for e in errors] == ["invalid_json"]
    refused = node.cli("batch", "cancel", batch_id, check=False)
    assert refused.returncode != 0 and "Cannot cancel a batch with status completed" in refused.stderr

    files = sorted(p.name for p in (node.home / "batches" / "files").iterdir())
    assert len(files) == 3  # input, output, errors
    node.cli("batch", "delete", batch_id)
    assert list((node.home / "batches" / "files").iterdir()) == []
    assert node.cli_json("batch", "list") == []
