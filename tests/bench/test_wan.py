"""The rented-link bench (bench/wan.py) in its smoke mode: it builds the far namespace, measures every
row and takes the namespace down again, also when interrupted (these need root: a network namespace
does); without root the row is skipped with a note. No timing is asserted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.harness import REPO, child_env, wait_until
from bench import wan, wan_net

REASON = wan_net.can_build()
needs_root = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def namespaces() -> list[str]:
    return [line.split()[0] for line in wan_net.ip("netns", "list", check=False).stdout.splitlines() if line.strip()]


@needs_root
def test_smoke_run_measures_every_row_and_removes_the_namespace(tmp_path: Path) -> None:
    out = tmp_path / "wan.json"
    result = subprocess.run([sys.executable, "-m", "bench.wan", "--smoke", "--out", str(out)], cwd=REPO,
                            env=child_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    raw = json.loads(out.read_text())
    assert "rented link at 40 ms RTT" in result.stdout
    assert raw["namespace_removed"] is True and raw["link"]["namespace"] not in namespaces()
    assert raw["link"]["far"].startswith("10.213.") and raw["link"]["tcp_connect_ms"] > 0
    for row in ("warm", "after_idle_longer", "after_idle_shorter"):
        for side in ("direct", "pairwise"):
            assert raw[row][side]["errors"] == 0, raw[row][side]["first_error"]
            assert isinstance(raw[row][side]["p50_ms"], float)
        assert isinstance(raw[row]["added_p50_ms"], float)
    for row in ("warm", "after_idle_longer", "after_idle_shorter"):  # the aiohttp floor over the same TLS link
        floor = raw[row]["floor"]
        assert floor["errors"] == 0 and floor["n"] == raw[row]["direct"]["n"], floor["first_error"]
        assert isinstance(raw[row]["floor_added_p50_ms"], float)
    idle = raw["after_idle_longer"]
    assert idle["pairwise_pool_only"]["errors"] == 0 and isinstance(idle["added_pool_only_p50_ms"], float)
    assert raw["server_closes_first"]["errors"] == 0 and raw["server_closes_first"]["n"] >= 2
    bursts = raw["bursts"]
    for key in ("direct_1", "pairwise_1", "direct_2", "pairwise_2"):
        assert bursts[key]["errors"] == 0, bursts[key]["first_error"]
        assert bursts[key]["handshakes"] >= 0 and bursts[key]["p99_ttfb_ms"] is not None
    assert isinstance(bursts["pairwise_handshakes_per_stream"], float)


@needs_root
def test_interrupted_run_still_removes_the_namespace(tmp_path: Path) -> None:
    before = set(namespaces())
    proc = subprocess.Popen([sys.executable, "-m", "bench.wan", "--smoke"], cwd=REPO, env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        made = wait_until(lambda: set(namespaces()) - before, 120, "the bench to build its namespace", interval=0.05)
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert not made & set(namespaces())
    assert not links_of(proc.pid)


def links_of(pid: int) -> list[str]:
    """This bench process's link ends (another test's bench may be running beside it)."""
    mine = f"{wan_net.LINK_PREFIX}{str(pid)[-7:]}"
    return [line for line in wan_net.ip("-br", "link").stdout.splitlines() if line.startswith(mine)]


@needs_root
@pytest.mark.processes  # `ip` commands, run by the bench's code
@pytest.mark.parametrize("step", ["link add", "link set"])
def test_an_interrupt_between_making_the_pair_and_hearing_back_leaves_nothing(
        step: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real_ip = wan_net.ip

    def interrupted(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = real_ip(*args, check=check)
        if " ".join(args[:2]) == step:
            raise KeyboardInterrupt  # the command ran; the signal lands before its answer is used
        return done

    monkeypatch.setattr(wan_net, "ip", interrupted)
    before = set(namespaces())
    with pytest.raises(KeyboardInterrupt):
        with wan_net.WanLink():
            pass
    assert set(namespaces()) == before
    assert not links_of(os.getpid())


def test_without_root_the_row_is_skipped_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wan_net.os, "geteuid", lambda: 1000)
    raw = wan.measure(wan.SMOKE, tmp_path)
    assert raw == {"skipped": "not root: a network namespace needs root (run bench/run as root for the rented-link row)"}
    assert wan.table(raw).startswith("rented link at 40 ms RTT: skipped (not root")


@needs_root
def test_side_by_side_run_answers_through_each_checkout_and_removes_the_namespace() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "bench.wan_ab", str(REPO), str(REPO), "--turns", "2"], cwd=REPO,
                            env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    raw = json.loads(stdout.strip().splitlines()[-1])
    assert raw["errors"] == {name: 0 for name in raw["ttfb_p50_ms"]}
    assert len(raw["added_p50_ms"]) == 2 and all(isinstance(v, float) for v in raw["added_p50_ms"].values())
    assert all(v > 0 for v in raw["cpu_ms_per_request"].values())  # each node did the work, on a CPU
    assert f"{wan_net.PREFIX}{proc.pid}" not in namespaces()  # its own link, by its pid, is gone
