"""Separate processes for separate nodes and engines, on 127.0.0.1 with ephemeral ports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PAIRWISE_MDNS", "off")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def wait_until(predicate: Any, timeout: float = 20.0, interval: float = 0.02, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def read_json_line(proc: subprocess.Popen[str], timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                raise AssertionError(f"process exited with {proc.returncode} before it was ready")
            continue
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError("process did not print its ready line")


def stop_process(proc: subprocess.Popen[str]) -> None:
    """SIGTERM, a few seconds to go, then SIGKILL; its stdout pipe closed."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    if proc.stdout:
        proc.stdout.close()


class TinyProc:
    """The tiny model server in its own process."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "app.tinymodel", "--port", "0", *args],
                                     stdout=subprocess.PIPE, text=True, env=child_env(), cwd=REPO)
        self.url: str = read_json_line(self.proc)["url"]

    def config(self, **options: Any) -> None:
        httpx.post(f"{self.url}/_tiny/config", json=options, timeout=5).raise_for_status()

    def stats(self) -> dict[str, Any]:
        return httpx.get(f"{self.url}/_tiny/stats", timeout=5).json()

    def stop(self) -> None:
        stop_process(self.proc)


class NodeProc:
    """A Pairwise node (`pairwise serve`) in its own process with its own home."""

    def __init__(self, home: Path, name: str, *extra: str, env: dict[str, str] | None = None,
                 preexec: Callable[[], None] | None = None) -> None:
        self.home, self.name = home, name
        self.preexec = preexec  # run in the child before it starts (e.g. lower its open-file limit)
        self.extra = extra
        self.env = child_env(**(env or {}))
        self.proc: subprocess.Popen[str] | None = None
        self.log = home.parent / f"{home.name}.out"

    def start(self) -> NodeProc:
        self.home.mkdir(parents=True, exist_ok=True)
        runtime = self.home / "runtime.json"
        runtime.unlink(missing_ok=True)
        out = open(self.log, "a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "--home", str(self.home), "serve", "--listen", "127.0.0.1:0",
             "--cluster-listen", "127.0.0.1:0", "--name", self.name, "--no-mdns", *self.extra],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=self.env, cwd=REPO, preexec_fn=self.preexec)
        out.close()

        def ready() -> dict[str, Any] | None:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"node {self.name} exited: {self.log.read_text()[-3000:]}")
            try:
                data = json.loads(runtime.read_text())
            except (OSError, ValueError):
                return None
            return data if data.get("listen") else None

        self.runtime = wait_until(ready, timeout=30, what=f"node {self.name} to start")
        return self

    @property
    def url(self) -> str:
        return f"http://{self.runtime['listen']}"

    def cli(self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([sys.executable, "-m", "app", "--home", str(self.home), *args], input=stdin,
                                capture_output=True, text=True, env=self.env, cwd=REPO, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"pairwise {' '.join(args)} failed ({result.returncode}): {result.stderr}{result.stdout}")
        return result

    def cli_json(self, *args: str, stdin: str | None = None) -> Any:
        return json.loads(self.cli(*args, "--json", stdin=stdin).stdout)

    def signal(self, sig: int) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)
