"""The processes a benchmark runs: tiny model server, Pairwise nodes, LiteLLM's proxy.

Everything listens on 127.0.0.1. Tiny servers and nodes take ephemeral ports
(port 0, read back from their ready line or runtime.json); LiteLLM cannot, so
it gets a port the kernel just handed out and released.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

REPO = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")
T = TypeVar("T")


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PAIRWISE_MDNS"] = "off"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def wait_until(predicate: Callable[[], T | None], timeout: float, what: str, interval: float = 0.002) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- /proc readings ----------------------------------------------------------------------------------------

def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def cpu_seconds(pid: int, *, tree: bool = False) -> float:
    """utime+stime of a process (all its threads), optionally with its live descendants."""
    total = 0
    for p in _descendants(pid) if tree else [pid]:
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5)
    return total / CLK_TCK


def rss_mb(pid: int, *, tree: bool = False) -> float:
    total_kb = 0
    for p in _descendants(pid) if tree else [pid]:
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total_kb += int(line.split()[1])
        except OSError:
            continue
    return round(total_kb / 1024, 1)


def _stop(proc: subprocess.Popen[Any] | None, sig: int = signal.SIGTERM, wait_s: float = 20) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


# -- tiny model server -------------------------------------------------------------------------------------

class Tiny:
    """`python -m app.tinymodel` in its own process; options change at run time via /_tiny/config."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "app.tinymodel", "--port", "0", *args],
                                     stdout=subprocess.PIPE, text=True, env=child_env(), cwd=REPO)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"tiny model server exited with {self.proc.returncode}")
            if line.strip().startswith("{"):
                self.url: str = json.loads(line)["url"]
                break
        else:
            raise RuntimeError("tiny model server did not print its ready line")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def config(self, **options: Any) -> None:
        httpx.post(f"{self.url}/_tiny/config", json=options, timeout=5, trust_env=False).raise_for_status()

    def stop(self) -> None:
        _stop(self.proc)
        if self.proc.stdout:
            self.proc.stdout.close()


# -- Pairwise node -----------------------------------------------------------------------------------------

class Node:
    """`pairwise serve` in its own process with its own home (like tests/support/procs.py NodeProc)."""

    def __init__(self, home: Path, name: str, tree: Path = REPO) -> None:
        self.home, self.name = home, name
        self.tree = tree  # the checkout whose app/ runs (a copy with a candidate patch, for A/B runs)
        self.proc: subprocess.Popen[str] | None = None
        self.log = home.parent / f"{home.name}.log"
        self.runtime: dict[str, Any] = {}
        self.startup_s = 0.0

    def start(self) -> Node:
        """Start and wait until the front door answers; startup_s is process start to that answer."""
        self.home.mkdir(parents=True, exist_ok=True)
        runtime_file = self.home / "runtime.json"
        runtime_file.unlink(missing_ok=True)
        with open(self.log, "a") as out:
            began = time.perf_counter()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app", "--home", str(self.home), "serve", "--listen", "127.0.0.1:0",
                 "--cluster-listen", "127.0.0.1:0", "--name", self.name, "--no-mdns"],
                stdout=out, stderr=subprocess.STDOUT, text=True, env=child_env(), cwd=self.tree)

        def ready() -> dict[str, Any] | None:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"node {self.name} exited: {self.log.read_text()[-2000:]}")
            try:
                data = json.loads(runtime_file.read_text())
            except (OSError, ValueError):
                return None
            return data if data.get("listen") else None

        self.runtime = wait_until(ready, 60, f"node {self.name} to write runtime.json")

        def answers() -> bool:
            try:
                return httpx.get(f"{self.url}/api/version", timeout=1, trust_env=False).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(answers, 30, f"node {self.name} front door")
        self.startup_s = time.perf_counter() - began
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://{self.runtime['listen']}"

    def control(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        token = (self.home / "control_token").read_text().strip()
        response = httpx.request(method, f"{self.url}/_pairwise/v1{path}", json=body, timeout=30, trust_env=False,
                                 headers={"Authorization": f"Bearer {token}"})
        response.raise_for_status()
        return response.json()

    def add_engine(self, name: str, url: str, api: str = "openai") -> None:
        self.control("POST", "/engines", {"name": name, "url": url, "api": api, "capacity": 256})

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([sys.executable, "-m", "app", "--home", str(self.home), *args], capture_output=True,
                                text=True, env=child_env(), cwd=REPO, timeout=timeout)
        if result.returncode != 0:
            raise RuntimeError(f"pairwise {' '.join(args)} failed ({result.returncode}): {result.stderr}{result.stdout}")
        return result

    def models(self) -> list[str]:
        data = httpx.get(f"{self.url}/v1/models", timeout=10, trust_env=False).json()
        return [m["id"] for m in data.get("data", [])]

    def stop(self) -> None:
        _stop(self.proc)


def pair(inviter: Node, joiner: Node, model: str, timeout: float = 60) -> None:
    """PIN-pair two running nodes through the CLI, then wait until the joiner sees the inviter's model."""
    invite = json.loads(inviter.cli("pair", "invite", "--json").stdout)
    joiner.cli("pair", "join", invite["address"], "--pin", str(invite["pin"]))
    wait_until(lambda: model in joiner.models(), timeout, f"{joiner.name} to list {model} from {inviter.name}",
               interval=0.2)


def cluster_wiring_landed() -> str | None:
    """The commit that added the cluster wiring (app/services/cluster/attach.py), if any."""
    result = subprocess.run(["git", "log", "--oneline", "--", "app/services/cluster/attach.py"], cwd=REPO,
                            capture_output=True, text=True)
    line = result.stdout.strip().splitlines()
    return line[-1] if line and (REPO / "app/services/cluster/attach.py").exists() else None
