"""Helpers for driving a sponsor node process against the simulated Hugging Face."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from app.control_client import ControlClient
from app.harness import NodeProc, wait_until
from app.home import Home
from app.simulator import SimulatorThread
from app.simulator.ca import client_ssl_context
from tests.support.patience import patience

REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
L4 = ("--gpu", "nvidia-l4", "--vendor", "aws", "--region", "us-east-1")  # $0.80 per hour
MESSAGES = [{"role": "user", "content": "hello"}]


def control(node: NodeProc) -> ControlClient:
    return ControlClient(Home(node.home), timeout_s=60)


def show(node: NodeProc, name: str) -> dict[str, Any]:
    return control(node).call("GET", f"/rented/{name}")  # type: ignore[no-any-return]


def wait_show(node: NodeProc, name: str, what: str, check: Any, timeout: float = 20.0) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def ready() -> bool:
        seen.clear()
        seen.update(show(node, name))
        return bool(check(seen))

    try:
        wait_until(ready, timeout=patience(timeout), interval=0.05, what=what)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last row: {json.dumps(seen)[:1500]}") from None
    return seen


def create(node: NodeProc, name: str, *flags: str, model: str = REPO) -> dict[str, Any]:
    """`rented create --yes`; HF's own scale-to-zero is kept out of the way unless the test sets it."""
    if "--scale-to-zero-min" not in flags:
        flags = (*flags, "--scale-to-zero-min", "600")
    out = node.cli("rented", "create", name, "--model", model, *flags, "--yes", "--json")
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def hf_http(sim: SimulatorThread) -> httpx.Client:
    return httpx.Client(base_url=sim.base_url, verify=client_ssl_context(sim.ca_file),
                        headers={"Authorization": f"Bearer {sim.demo_token}"}, timeout=10)


def hf_endpoint(sim: SimulatorThread, name: str, namespace: str = "demo-user") -> dict[str, Any] | None:
    with hf_http(sim) as http:
        response = http.get(f"/v2/endpoint/{namespace}/{name}")
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return response.json()  # type: ignore[no-any-return]


def hf_state(sim: SimulatorThread, name: str) -> str | None:
    found = hf_endpoint(sim, name)
    return None if found is None else str(found["status"]["state"])


def ledger_row(sim: SimulatorThread, name: str, namespace: str = "demo-user") -> dict[str, Any]:
    return sim.control("GET", "/_sim/ledger")["endpoints"][f"{namespace}/{name}"]  # type: ignore[no-any-return]


class Events:
    """The node's event stream, collected on a thread from the moment it is made. Close it before the
    node stops: an open /events stream holds up the node's shutdown."""

    def __init__(self, node: NodeProc) -> None:
        self.seen: list[dict[str, Any]] = []
        runtime = json.loads((node.home / "runtime.json").read_text())
        token = (node.home / "control_token").read_text().strip()
        self._http = httpx.Client(timeout=None, trust_env=False)
        self._url = f"http://{runtime['listen']}/_pairwise/v1/events"
        self._headers = {"Authorization": f"Bearer {token}"}
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _follow(self) -> None:
        try:
            with self._http.stream("GET", self._url, headers=self._headers) as response:
                for line in response.iter_lines():
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    if event.get("kind") == "subscribed":
                        self._ready.set()
                    self.seen.append(event)
        except Exception:  # closed by the test, or the node stopped
            self._ready.set()

    def close(self) -> None:
        self._http.close()
        self._thread.join(5)

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.seen]

    def wait(self, kind: str, timeout: float = 20.0) -> dict[str, Any]:
        return wait_until(lambda: next((e for e in self.seen if e["kind"] == kind), None), timeout=patience(timeout),
                          what=f"event {kind}")  # type: ignore[no-any-return]


def sim_state(sim: SimulatorThread, name: str, namespace: str = "demo-user") -> str:
    """HF's state read through a /_sim/ control (never hit by injected faults): an empty mutate."""
    return str(sim.control("POST", f"/_sim/endpoints/{namespace}/{name}/mutate", {})["status"]["state"])
