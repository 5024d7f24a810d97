"""`pairwise demo`: a node signed in to the simulated Hugging Face, usable at once, stopped cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from app.harness import REPO as REPO_ROOT
from app.harness import child_env, wait_until
from tests.support.secret_service import require_secret_service

REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_demo_starts_signs_in_and_stops(tmp_path: Path) -> None:
    require_secret_service()
    home = tmp_path / "demo-home"
    env = child_env()
    proc = subprocess.Popen([sys.executable, "-m", "app", "--home", str(home), "demo", "--listen", "127.0.0.1:0",
                             "--headless"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO_ROOT)
    try:
        runtime = wait_until(lambda: _runtime(home), timeout=60, what="demo node")

        def cli(*args: str) -> dict:
            return _cli(home, env, *args)

        status = wait_until(lambda: (s := cli("hf", "status")).get("signed_in") and s, timeout=30,
                            what="demo sign-in")
        assert status["user"] == "demo-user" and status["simulated"] is True
        reply = httpx.post(f"http://{runtime['listen']}/api/chat", timeout=30,
                           json={"model": "demo-local", "stream": False, "messages": [{"role": "user", "content": "hi"}]})
        assert reply.status_code == 200 and reply.json()["done"] is True

        # A newcomer rents a "GPU", uses it, pauses it and deletes it: all simulated, all labelled.
        run = subprocess.run([sys.executable, "-m", "app", "--home", str(home), "rented", "create", "demo-gpu",
                              "--model", REPO, "--gpu", "nvidia-l4", "--yes"],
                             capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=120)
        assert run.returncode == 0, run.stderr
        row = wait_until(lambda: (r := cli("rented", "show", "demo-gpu")).get("state") == "eligible" and r,
                         timeout=90, what="the simulated GPU to run")
        assert row["simulated"] is True and row["label"] == "Rented · off-LAN"
        answer = httpx.post(f"http://{runtime['listen']}/v1/chat/completions", timeout=60,
                            json={"model": REPO, "messages": [{"role": "user", "content": "hi"}]})
        assert answer.status_code == 200 and answer.headers["X-Pairwise-Off-LAN"] == "demo-gpu"
        for args in (("rented", "pause", "demo-gpu"), ("rented", "delete", "demo-gpu", "--yes")):
            done = subprocess.run([sys.executable, "-m", "app", "--home", str(home), *args], capture_output=True,
                                  text=True, env=env, cwd=REPO_ROOT, timeout=120)
            assert done.returncode == 0, done.stderr
        assert cli("rented", "list") == []

        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        assert "SIMULATED Hugging Face" in out and "stopping the demo" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _cli(home: Path, env: dict[str, str], *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "app", "--home", str(home), *args, "--json"],
                         capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _runtime(home: Path) -> dict | None:
    try:
        data = json.loads((home / "runtime.json").read_text())
    except (OSError, ValueError):
        return None
    return data if data.get("listen") else None


def test_demo_opens_the_tray_app_where_there_is_a_display(tmp_path: Path) -> None:
    """A newcomer tries the wizard for free: `pairwise demo` on a desktop is the tray app, signed in."""
    require_secret_service()
    home = tmp_path / "demo-home"
    out_file = tmp_path / "demo.out"
    env = child_env(QT_QPA_PLATFORM="offscreen")
    with open(out_file, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app", "demo", "--home", str(home), "--listen", "127.0.0.1:0"],
                                stdout=out, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO_ROOT)
    try:
        wait_until(lambda: "The tray app is open" in out_file.read_text(), timeout=90, what="the demo's tray app")
        assert "SIMULATED Hugging Face" in out_file.read_text()
        status = subprocess.run([sys.executable, "-m", "app", "hf", "status", "--json", "--home", str(home)],
                                capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60)
        assert status.returncode == 0 and json.loads(status.stdout)["simulated"] is True
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        assert not (home / "runtime.json").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_demo_headless_runs_without_a_secret_service_and_leaves_the_real_install_alone(tmp_path: Path) -> None:
    """No D-Bus session at all (so no Secret Service): the demo still signs in (the simulator's token
    stays in its memory), rents, bills into its own spend account, and the real per-user spend account
    and login item are untouched, byte for byte."""
    home = tmp_path / "demo-home"
    data, config = tmp_path / "data", tmp_path / "config"
    real_spend = data / "pairwise-spend"
    real_spend.mkdir(parents=True)
    (real_spend / "spend.json").write_text('{"real": "account"}')
    (config / "autostart").mkdir(parents=True)
    real_entry = config / "autostart" / "pairwise.desktop"
    real_entry.write_text("[Desktop Entry]\nExec=pairwise\n")
    env = child_env(XDG_DATA_HOME=str(data), XDG_CONFIG_HOME=str(config),
                    PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    for name in ("DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL", "PAIRWISE_SPEND_DIR"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "app", "--home", str(home), "demo", "--listen", "127.0.0.1:0",
                             "--headless"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO_ROOT)
    try:
        wait_until(lambda: _runtime(home), timeout=60, what="demo node")

        def cli(*args: str) -> dict:
            return _cli(home, env, *args)

        status = wait_until(lambda: (s := cli("hf", "status")).get("signed_in") and s, timeout=30,
                            what="demo sign-in without a keyring")
        assert status["user"] == "demo-user"
        run = subprocess.run([sys.executable, "-m", "app", "--home", str(home), "rented", "create", "demo-gpu",
                              "--model", REPO, "--gpu", "nvidia-l4", "--yes"],
                             capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=120)
        assert run.returncode == 0, run.stderr
        wait_until(lambda: (r := cli("rented", "show", "demo-gpu")).get("state") == "eligible" and r,
                   timeout=90, what="the simulated GPU to run")
        wait_until(lambda: any((home / "spend").glob("*")), timeout=60, what="the demo's own spend account")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out[-3000:]
        assert "no OS credential store" not in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert sorted(p.name for p in real_spend.iterdir()) == ["spend.json"]
    assert (real_spend / "spend.json").read_text() == '{"real": "account"}'
    assert real_entry.read_text() == "[Desktop Entry]\nExec=pairwise\n"


def test_a_demo_restart_forgets_the_last_runs_simulated_gpus(tmp_path: Path) -> None:
    """The simulator keeps nothing between runs: the next demo forgets the last run's GPUs (and says so)
    instead of reporting each one "deleted outside Pairwise"."""
    home = tmp_path / "demo-home"
    env = child_env(PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "app", "--home", str(home), "demo", "--listen", "127.0.0.1:0",
                                 "--headless"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                cwd=REPO_ROOT)

    proc = start()
    try:
        wait_until(lambda: _runtime(home), timeout=60, what="demo node")
        wait_until(lambda: _cli(home, env, "hf", "status").get("signed_in"), timeout=30, what="demo sign-in")
        run = subprocess.run([sys.executable, "-m", "app", "--home", str(home), "rented", "create", "demo-gpu",
                              "--model", REPO, "--gpu", "nvidia-l4", "--yes"],
                             capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=120)
        assert run.returncode == 0, run.stderr
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        proc = start()
        wait_until(lambda: _runtime(home), timeout=60, what="demo node again")
        wait_until(lambda: _cli(home, env, "hf", "status").get("signed_in"), timeout=30, what="demo sign-in again")
        assert _cli(home, env, "rented", "list") == []
        events = subprocess.run([sys.executable, "-m", "app", "--home", str(home), "nodes", "--json"],
                                capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60)
        assert "deleted outside Pairwise" not in events.stdout
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert "The simulated GPUs of the last demo run (demo-gpu) ended with it" in out
        assert "deleted outside Pairwise" not in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
