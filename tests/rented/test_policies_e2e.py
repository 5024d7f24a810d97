"""The policies end to end on one sponsor: the same model on a local engine (tiny model, http on
loopback) and on a rented node (tiny model behind HTTPS with a test CA).

default → local serves; overflow with the local owner busy → rented serves; prefer → rented
serves, and with the rented node down → local serves; local down → rented serves (failover)."""

from __future__ import annotations

import threading
from typing import Any

import httpx

from app.control_client import ControlClient
from app.harness import NodeProc, wait_until
from app.home import Home
from tests.rented.conftest import TOKEN

MODEL = "shared-model"


def served_by(node: NodeProc) -> tuple[str, str | None]:
    response = httpx.post(node.url + "/v1/chat/completions", timeout=30,
                          json={"model": MODEL, "messages": [{"role": "user", "content": "who serves?"}]})
    assert response.status_code == 200, response.text
    return response.headers["x-pairwise-node"], response.headers.get("x-pairwise-off-lan")


class HeldStream:
    """A streamed request kept open (the local engine streams slowly) until release()."""

    def __init__(self, node: NodeProc) -> None:
        self.started, self._release = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, args=(node,), daemon=True)
        self._thread.start()
        assert self.started.wait(20), "the held stream did not start"

    def _run(self, node: NodeProc) -> None:
        body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "take your time"}]}
        with httpx.stream("POST", node.url + "/v1/chat/completions", json=body, timeout=60) as response:
            lines = response.iter_lines()  # kept referenced: closing it would close the response
            next(lines)
            self.started.set()
            self._release.wait(30)

    def release(self) -> None:
        self._release.set()
        self._thread.join(10)


def control(node: NodeProc) -> ControlClient:
    return ControlClient(Home(node.home))


def engine_in_flight(node: NodeProc, name: str) -> int:
    return int(next(e for e in control(node).call("GET", "/engines")["engines"] if e["name"] == name)["in_flight"])


def use(node: NodeProc, policy: str) -> None:
    """Same as `pairwise rented set gpu --use POLICY` (tested elsewhere), without a CLI process each time."""
    assert control(node).call("PATCH", "/rented/gpu", {"changes": {"routing": {"use": policy}}})["policy"] == policy


def test_policies_end_to_end(node_factory: Any, tiny_factory: Any, tls_tiny_factory: Any) -> None:
    local = tiny_factory("--api", "openai", "--model", MODEL)
    rented = tls_tiny_factory("--require-token", TOKEN, "--model", MODEL)
    node = node_factory("A").start()
    node.cli("engines", "add", "local", "--url", local.url, "--api", "openai", "--capacity", "1")
    node.cli("rented", "attach", "gpu", "--url", rented.url, "--ca-file", rented.ca_file, "--token-stdin",
             "--price-per-hour", "1.8", stdin=TOKEN)

    # Default policy (when-no-local-node): the local owner serves.
    assert served_by(node) == ("A", None)

    # Overflow: local while it is free; the rented node once every local owner is busy.
    node.cli("rented", "set", "gpu", "--use", "overflow")
    assert served_by(node) == ("A", None)
    local.config(tokens_per_s=2.0)
    held = HeldStream(node)
    wait_until(lambda: engine_in_flight(node, "local") == 1, what="the local engine to be busy")
    assert served_by(node) == ("gpu", "gpu")
    held.release()
    local.config(tokens_per_s=0.0)
    wait_until(lambda: engine_in_flight(node, "local") == 0, what="the local engine to be free")

    # Prefer: the rented node first.
    use(node, "prefer")
    assert served_by(node) == ("gpu", "gpu")

    # Local down → the rented node serves (failover within when-no-local-node).
    use(node, "when-no-local-node")
    local.stop()
    assert served_by(node) == ("gpu", "gpu")

    # Rented down → local serves (failover from prefer).
    fresh = tiny_factory("--api", "openai", "--model", MODEL)
    node.cli("engines", "remove", "local")
    node.cli("engines", "add", "local2", "--url", fresh.url, "--api", "openai")
    use(node, "prefer")
    rented.stop()
    assert served_by(node) == ("A", None)

    jobs = node.cli_json("jobs")
    rented_jobs = [j for j in jobs if j["rented_node"] == "gpu" and j["state"] == "completed"]
    assert len(rented_jobs) == 3 and all(j["off_lan"] and j["serving_node"] == "gpu" for j in rented_jobs)
    assert all(not j["off_lan"] for j in jobs if j["serving_node"] == "A")
