"""Batch-window decisions without a network: durations, the window's price, billed minutes from HF's
times, the cap check's refusal, tolerant reading of HF's Job objects, and the run body."""

from __future__ import annotations

import pytest

from app.services.errors import ConfigError, RefusedError
from app.services.hf.jobs_lifecycle import billed_minutes, timed_out
from app.services.hf.jobs_models import (
    JobFlavor,
    JobInfo,
    describe_duration,
    parse_window,
    run_body,
    window_cost,
)
from app.services.hf.jobs_ops import HfJobs
from app.services.hf.jobs_records import JobRecord


def test_windows_are_durations_with_m_for_minutes() -> None:
    assert parse_window("30m") == 1800 and parse_window("2h") == 7200 and parse_window("1d") == 86400
    assert parse_window(" 1.5h ") == 5400
    for bad in ("", "2", "2 hours", "-1h", "30s", "h"):
        with pytest.raises(ConfigError, match="--window"):
            parse_window(bad)
    assert describe_duration(4440) == "1h 14m" and describe_duration(7200) == "2h" and describe_duration(600) == "10m"


def test_a_window_costs_every_started_minute_with_the_port_fee() -> None:
    flavor = JobFlavor.parse({"name": "l4x1", "unitCostUSD": 0.8 / 60, "accelerator": {"model": "L4", "quantity": 1,
                                                                                      "vram": "24 GB"}})
    assert flavor is not None and flavor.window_price_per_hour == pytest.approx(0.81)
    assert window_cost(flavor.window_price_per_hour, 7200) == pytest.approx(1.62)
    assert window_cost(0.81, 61) == pytest.approx(2 * 0.81 / 60)  # a started minute is billed
    assert JobFlavor.parse({"name": "x"}) is None  # no price: not offered


def record(**kw: object) -> JobRecord:
    base: dict[str, object] = {"namespace": "ns", "job_id": "j", "model": "m/m", "flavor": "l4x1", "engine": "vllm",
                               "window_s": 600, "price_per_hour": 0.81, "created_at": 1000.0}
    return JobRecord(**{**base, **kw})  # type: ignore[arg-type]


def test_billed_minutes_follow_hf_start_and_finish_never_past_the_window() -> None:
    assert billed_minutes(record(), 5000.0, 60.0) == 0  # not started: nothing billed
    running = record(stage="RUNNING", started_at=1000.0)
    assert billed_minutes(running, 1000.0, 60.0) == 1  # a minute is charged as it starts
    assert billed_minutes(running, 1125.0, 60.0) == 3
    assert billed_minutes(running, 99999.0, 60.0) == 10  # HF stops it at the window's end
    ended = record(stage="CANCELED", started_at=1000.0, finished_at=1120.0)
    assert billed_minutes(ended, 99999.0, 60.0) == 2  # exactly two minutes stays two
    assert billed_minutes(record(stage="RUNNING", started_at=1000.0), 1001.0, 0.5) == 3  # short test minute


def test_a_timeout_is_the_windows_end_not_a_failure() -> None:
    assert timed_out(record(stage="ERROR", message="Job timed out after 600s"))
    assert not timed_out(record(stage="ERROR", message="CUDA out of memory"))
    assert not timed_out(record(stage="CANCELED", message="timed out"))


def test_the_cap_refusal_names_how_long_it_can_pay_for() -> None:
    budget = {"usd_per_day": 1.0, "usd_per_month": None, "spent_day_usd": 0.0, "spent_month_usd": 0.0}
    with pytest.raises(RefusedError) as refused:
        HfJobs._check_caps("batch", 0.81, 7200, 1.62, budget)
    assert "it can pay for 1h 14m" in refused.value.message and "--window 74m" in refused.value.message
    spent = {**budget, "spent_day_usd": 1.0}
    with pytest.raises(RefusedError, match="cannot pay for a minute.*next UTC day"):
        HfJobs._check_caps("batch", 0.81, 1800, 0.405, spent)
    HfJobs._check_caps("batch", 0.81, 3600, 0.81, dict(budget))  # fits: no refusal


def test_job_objects_are_read_tolerantly() -> None:
    info = JobInfo.parse("ns", {"id": "abc", "status": {"stage": "RUNNING", "exposeUrls": ["https://abc--8000.hf.jobs"]},
                                "startedAt": "2026-01-01T00:00:00.000Z", "labels": {"a": "b"}, "owner": None,
                                "expose": {"ports": [8000]}, "unknown": 1})
    assert (info.stage, info.expose_url, info.labels, info.namespace) == ("RUNNING", "https://abc--8000.hf.jobs",
                                                                          {"a": "b"}, "ns")
    assert info.started_at == 1767225600.0 and info.public_ports == [] and not info.ended
    with pytest.raises(ValueError):
        JobInfo.parse("ns", {"status": {}})


def test_the_run_body_exposes_one_token_protected_port() -> None:
    for engine in ("vllm", "sglang", "llamacpp"):
        body = run_body(repo="org/model", flavor="l4x1", engine=engine, window_s=1800, labels={"k": "v"}, token="t")
        assert list(body["expose"]) == ["ports"] and len(body["expose"]["ports"]) == 1  # never portsPublic
        assert body["timeoutSeconds"] == 1800 and "org/model" in body["command"] and "0.0.0.0" in body["command"]
        assert body["labels"] == {"k": "v"} and body["secrets"] == {"HF_TOKEN": "t"}
