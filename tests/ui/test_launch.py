"""`pairwise` with no command, as a user starts it: a process of its own (offscreen Qt)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.harness import REPO, child_env, wait_until
from app.simulator import SimSettings, SimulatorThread
from tests.ui.conftest import MINUTE_S, SIM
from tests.ui.conftest import REPO as MODEL


def pairwise(home: Path, *args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", "--home", str(home), *args], input=stdin, text=True,
                          capture_output=True, env=env, cwd=REPO, timeout=60)


def tray_env(sim: SimulatorThread | None = None) -> dict[str, str]:
    env = child_env(QT_QPA_PLATFORM="offscreen")
    for key in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(key, None)
    if sim is not None:
        env.update({"PAIRWISE_CA_FILE": str(sim.ca_file), "PAIRWISE_HF_ENDPOINTS_URL": sim.endpoints_url,
                    "PAIRWISE_HF_HUB_URL": sim.hub_url, "PAIRWISE_HF_CATALOG_URL": sim.catalog_url,
                    "PAIRWISE_HF_ROUTER_URL": sim.router_url, "PAIRWISE_BILLING_MINUTE_S": str(MINUTE_S),
                    "PAIRWISE_HF_POLL_STARTING_S": "0.03", "PAIRWISE_HF_POLL_STEADY_S": "0.1",
                    "PAIRWISE_HF_BACKOFF_S": "0.05"})
    return env


@pytest.fixture
def sim_thread() -> Iterator[SimulatorThread]:
    with SimulatorThread(SimSettings(**SIM)) as thread:  # type: ignore[arg-type]
        yield thread


def test_no_display_says_to_run_serve(tmp_path: Path) -> None:
    env = child_env()
    for key in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(key, None)
    result = pairwise(tmp_path / "home", env=env)
    assert result.returncode == 2
    assert "no display" in result.stderr and "pairwise serve" in result.stderr
    assert not (tmp_path / "home" / "runtime.json").exists()  # no node was started


def test_one_instance_per_home_and_sigterm_pauses(tmp_path: Path, sim_thread: SimulatorThread) -> None:
    home = tmp_path / "home"
    env = tray_env(sim_thread)
    log = open(tmp_path / "tray.out", "w")
    tray = subprocess.Popen([sys.executable, "-m", "app", "--home", str(home), "--listen", "127.0.0.1:0",
                             "--cluster-listen", "127.0.0.1:0", "--name", "desk", "--no-mdns"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    try:
        runtime = home / "runtime.json"

        def started() -> dict[str, Any] | None:
            assert tray.poll() is None, (tmp_path / "tray.out").read_text()
            try:
                return json.loads(runtime.read_text())  # type: ignore[no-any-return]
            except (OSError, ValueError):
                return None

        info = wait_until(started, timeout=30, what="the tray app's node")
        assert info["pid"] == tray.pid
        # The control API works as with `serve`: sign in and rent through the CLI.
        assert pairwise(home, "hf", "login", "--token-stdin", env=env, stdin=sim_thread.demo_token + "\n").returncode == 0
        made = pairwise(home, "rented", "create", "gpu", "--model", MODEL, "--gpu", "nvidia-t4", "--vendor", "aws",
                        "--region", "us-east-1", "--yes", "--json", env=env)
        assert made.returncode == 0, made.stderr

        def hf_state() -> str | None:
            shown = pairwise(home, "rented", "show", "gpu", "--json", env=env)
            return json.loads(shown.stdout).get("provider_state") if shown.returncode == 0 else None

        # A billed minute is 0.2 s here, so the endpoint may run and already scale to zero (3 s) between two
        # looks on a busy machine: both mean it came up, and both are paused on exit.
        wait_until(lambda: hf_state() in ("running", "scaledToZero"), timeout=60, what="the endpoint up")

        second = pairwise(home, env=env)
        assert second.returncode == 0 and "brought forward" in second.stdout
        node_log = home / "logs" / "node.log"
        wait_until(lambda: "a second start asked for the window" in node_log.read_text(), what="the first to answer")
        assert tray.poll() is None  # the first instance keeps running

        tray.send_signal(signal.SIGTERM)
        assert tray.wait(30) == 0
        assert not runtime.exists()
        endpoint = sim_thread.sim.state.endpoints.get(sim_thread.demo_namespace, "gpu")
        assert endpoint is not None and endpoint.state == "paused"
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait(10)
        log.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display rule is Linux's")
def test_has_display_rule() -> None:
    from app.services.platform.desktop import has_display

    assert not has_display({})
    assert has_display({"DISPLAY": ":0"}) and has_display({"WAYLAND_DISPLAY": "wayland-0"})
    assert has_display({"QT_QPA_PLATFORM": "offscreen"})
    assert os.environ.get("QT_QPA_PLATFORM") == "offscreen"
