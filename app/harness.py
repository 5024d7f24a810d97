"""Separate processes for separate nodes and engines: the one harness of the tests and the bench.

Everything listens on 127.0.0.1 with ephemeral ports (read back from a ready line or
``runtime.json``). Nothing here is used by a running node; it lives under ``app/`` so
that ``tests/`` and ``bench/`` import the same code without the bench importing tests.
Waiting is always on a state (a predicate), never on a fixed sleep.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import httpx

from app.services.json_types import JsonObject, JsonValue

REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")


class WaitTimedOut(AssertionError):
    """A state that never came; an AssertionError so a test failing on it reads as a failed expectation."""


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PAIRWISE_MDNS", "off")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def wait_until(predicate: Callable[[], T | None], timeout: float = 20.0, what: str = "condition", *,
               interval: float = 0.02) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise WaitTimedOut(f"timed out after {timeout:g}s waiting for {what}")


def free_port() -> int:
    """A port the kernel just handed out and released, for servers that cannot take port 0."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_json_line(proc: subprocess.Popen[str], timeout: float = 30.0) -> JsonObject:
    """The first JSON line a child prints (its ready line)."""
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                raise WaitTimedOut(f"process exited with {proc.returncode} before it was ready")
            continue
        line = line.strip()
        if line.startswith("{"):
            ready: JsonObject = json.loads(line)
            return ready
    raise WaitTimedOut("process did not print its ready line")


def stop_process(proc: subprocess.Popen[str] | subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM, wait_s: float = 20.0) -> None:
    """A signal (SIGTERM), some seconds to go, then SIGKILL; its stdout pipe closed."""
    if proc is None:
        return
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    if proc.stdout:
        proc.stdout.close()


class TinyProc:
    """`python -m app.tinymodel` in its own process; options change at run time via /_tiny/config."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "app.tinymodel", "--port", "0", *args],
                                     stdout=subprocess.PIPE, text=True, encoding="utf-8", env=child_env(), cwd=REPO)
        self.url = str(read_json_line(self.proc)["url"])

    @property
    def pid(self) -> int:
        return self.proc.pid

    def config(self, **options: object) -> None:
        httpx.post(f"{self.url}/_tiny/config", json=options, timeout=5, trust_env=False).raise_for_status()

    def stats(self) -> JsonObject:
        stats: JsonObject = httpx.get(f"{self.url}/_tiny/stats", timeout=5, trust_env=False).json()
        return stats

    def stop(self) -> None:
        stop_process(self.proc, wait_s=5)


class NodeProc:
    """A Pairwise node (`pairwise serve`) in its own process with its own home.

    ``tree`` is the checkout whose ``app/`` runs (the bench runs a candidate patch from another one);
    ``startup_s`` is process start to the front door answering, when ``start(wait_answer=True)``.
    """

    def __init__(self, home: Path, name: str, *extra: str, env: dict[str, str] | None = None,
                 tree: Path = REPO, preexec: Callable[[], None] | None = None) -> None:
        self.home, self.name, self.extra, self.tree = home, name, extra, tree
        self.preexec = preexec  # run in the child before it starts (e.g. lower its open-file limit)
        self.env = child_env(**(env or {}))
        self.proc: subprocess.Popen[str] | None = None
        self.log = home.parent / f"{home.name}.out"
        self.runtime: JsonObject = {}
        self.startup_s = 0.0

    def start(self, *, wait_answer: bool = False, timeout: float = 60.0) -> NodeProc:
        self.home.mkdir(parents=True, exist_ok=True)
        runtime = self.home / "runtime.json"
        runtime.unlink(missing_ok=True)
        began = time.perf_counter()
        with open(self.log, "a", encoding="utf-8") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app", "--home", str(self.home), "serve", "--listen", "127.0.0.1:0",
                 "--cluster-listen", "127.0.0.1:0", "--name", self.name, "--no-mdns", *self.extra],
                stdout=out, stderr=subprocess.STDOUT, text=True, encoding="utf-8", env=self.env, cwd=self.tree, preexec_fn=self.preexec)

        def ready() -> JsonObject | None:
            if self.proc is not None and self.proc.poll() is not None:
                raise WaitTimedOut(f"node {self.name} exited: {self.log.read_text(encoding='utf-8')[-3000:]}")
            try:
                data = json.loads(runtime.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            return data if data.get("listen") else None

        self.runtime = wait_until(ready, timeout, f"node {self.name} to start", interval=0.002)
        if wait_answer:
            wait_until(self._answers, timeout, f"node {self.name} front door", interval=0.002)
        self.startup_s = time.perf_counter() - began
        return self

    def _answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/api/version", timeout=1, trust_env=False).status_code == 200
        except httpx.HTTPError:
            return False

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://{self.runtime['listen']}"

    def control(self, method: str, path: str, body: Mapping[str, object] | None = None) -> JsonValue:
        """A call to the node's control API with its control token."""
        token = (self.home / "control_token").read_text(encoding="utf-8").strip()
        response = httpx.request(method, f"{self.url}/_pairwise/v1{path}", json=body, timeout=30, trust_env=False,
                                 headers={"Authorization": f"Bearer {token}"})
        response.raise_for_status()
        return response.json()

    def add_engine(self, name: str, url: str, api: str = "openai", capacity: int = 256) -> None:
        self.control("POST", "/engines", {"name": name, "url": url, "api": api, "capacity": capacity})

    def models(self) -> list[str]:
        data = httpx.get(f"{self.url}/v1/models", timeout=10, trust_env=False).json()
        return [m["id"] for m in data.get("data", [])]

    def cli(self, *args: str, stdin: str | None = None, check: bool = True,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([sys.executable, "-m", "app", "--home", str(self.home), *args], input=stdin,
                                capture_output=True, text=True, encoding="utf-8", env=self.env, cwd=self.tree, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"pairwise {' '.join(args)} failed ({result.returncode}): {result.stderr}{result.stdout}")
        return result

    def cli_json(self, *args: str, stdin: str | None = None) -> JsonValue:
        return json.loads(self.cli(*args, "--json", stdin=stdin).stdout)

    def signal(self, sig: int) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(30)

    def stop(self) -> None:
        stop_process(self.proc)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)


def pair(inviter: NodeProc, joiner: NodeProc, model: str, timeout: float = 60) -> None:
    """PIN-pair two running nodes through the CLI, then wait until the joiner lists the inviter's model."""
    invite = json.loads(inviter.cli("pair", "invite", "--json").stdout)
    joiner.cli("pair", "join", invite["address"], "--pin", str(invite["pin"]))
    wait_until(lambda: model in joiner.models(), timeout, f"{joiner.name} to list {model} from {inviter.name}",
               interval=0.2)
