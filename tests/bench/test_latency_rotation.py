"""The latency phase's rotations (bench/phases.py): a path whose work outlasts its answer (LiteLLM's
proxy) is measured in a rotation of its own beside direct, never between the other paths' samples,
and its added time is taken against that rotation's direct. Real tiny servers stand in for the paths;
no timing is asserted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.harness import TinyProc
from bench import phases, report
from bench.load import Target
from bench.stats import added, reference_for

MODEL = "tiny:latest"
SETTINGS = phases.Settings(latency_requests=6, throughput_repeats=1, paced_chunks=10, paced_tokens_per_s=1000,
                           unpaced_chunks=10, unpaced_repeats=1, levels=(1,), level_duration_s=0.1, level_tokens=2,
                           level_tokens_per_s=50)


@pytest.fixture()
def servers() -> Iterator[tuple[TinyProc, TinyProc]]:
    shared, apart = TinyProc("--model", MODEL), TinyProc("--model", MODEL)
    try:
        yield shared, apart
    finally:
        shared.stop()
        apart.stop()


def test_a_path_in_apart_gets_its_own_rotation_beside_direct(
        servers: tuple[TinyProc, TinyProc], monkeypatch: pytest.MonkeyPatch) -> None:
    shared, apart = servers
    rotations: list[list[str]] = []
    real = phases.interleaved_latency

    async def recorded(targets: list[Target], body: dict[str, Any], count: int, warmup: int = 10) -> Any:
        rotations.append([t.name for t in targets])
        return await real(targets, body, count, warmup)

    monkeypatch.setattr(phases, "interleaved_latency", recorded)
    paths = {name: phases.Path(Target(name, server.url)) for name, server in
             (("direct", shared), ("pairwise", shared), ("nginx", shared), ("litellm", apart))}
    out = phases.latency(paths, MODEL, SETTINGS)

    # Per mode: the shared rotation without it, then its own with direct alone.
    assert rotations == [["direct", "pairwise", "nginx"], ["direct", "litellm"]] * 2
    warmup = min(10, SETTINGS.latency_requests)
    assert apart.stats()["requests"] == 2 * (warmup + SETTINGS.latency_requests)  # only its own rotations
    for mode in ("stream", "nonstream"):
        data = out[mode]
        assert set(data) == {"direct", "pairwise", "nginx", "litellm", "direct_beside_litellm"}
        assert all(data[name]["errors"] == 0 and data[name]["n"] == SETTINGS.latency_requests for name in data)
        assert reference_for(data, "litellm") == data["direct_beside_litellm"]
        assert reference_for(data, "pairwise") == data["direct"]

    # The table and the headline take LiteLLM's added time against its own rotation's direct.
    raw = {"latency": out, "paths": list(paths), "litellm_proc": {"startup_s": 1.0, "idle_rss_mb": 1.0}}
    headline = report.headline(raw)
    stream = out["stream"]
    assert headline["litellm"]["p50_added_per_hop_ms"] == added(stream["litellm"], stream["direct_beside_litellm"],
                                                                "p50_ms")
    assert headline["p50_added_per_hop_ms"] == added(stream["pairwise"], stream["direct"], "p50_ms")
    assert "direct_beside_litellm" not in report.table(raw)


def test_without_direct_an_apart_path_is_still_measured(servers: tuple[TinyProc, TinyProc]) -> None:
    _, apart = servers
    out = phases.latency({"litellm": phases.Path(Target("litellm", apart.url))}, MODEL, SETTINGS)
    assert set(out["stream"]) == {"litellm"} and out["stream"]["litellm"]["errors"] == 0
