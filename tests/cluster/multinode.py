"""Helpers for cluster tests with nodes as separate processes on 127.0.0.1."""

from __future__ import annotations

import socket
from typing import Any

import httpx

from app.harness import NodeProc, wait_until
from tests.support.patience import patience

# Fast polls so a peer is seen online (or offline) within a second; mDNS is off (child_env).
FAST = {"PAIRWISE_PEER_POLL_S": "0.3"}


def free_port() -> int:
    """A free port whose successor (the default pairing port) is free too."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port < 65535:
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port


def pair(inviter: NodeProc, joiner: NodeProc) -> None:
    """Pair two running nodes by PIN through the CLI and wait until each sees the other online."""
    invite = inviter.cli_json("pair", "invite")
    joiner.cli("pair", "join", invite["address"], "--pin", invite["pin"])
    wait_online(inviter, joiner)
    wait_online(joiner, inviter)


def api(node: NodeProc, method: str, path: str, body: Any = None) -> Any:
    """The node's control API directly: what the CLI calls, without a process per look."""
    token = (node.home / "control_token").read_text().strip()
    response = httpx.request(method, f"{node.url}/_pairwise/v1{path}", json=body, timeout=30,
                             headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()


def nodes(node: NodeProc) -> list[dict[str, Any]]:
    return list(api(node, "GET", "/nodes")["nodes"])


def row(node: NodeProc, other: NodeProc) -> dict[str, Any] | None:
    return next((n for n in nodes(node) if n["id"] == other.runtime["node_id"]), None)


def wait_online(node: NodeProc, other: NodeProc, online: bool = True, timeout: float = 20.0) -> dict[str, Any]:
    def seen() -> dict[str, Any] | None:
        found = row(node, other)
        return found if found is not None and found["online"] is online else None

    state = "online" if online else "offline"
    return dict(wait_until(seen, timeout=patience(timeout), interval=0.05, what=f"{node.name} to see {other.name} {state}"))


def wait_models(node: NodeProc, other: NodeProc, *models: str) -> None:
    def has() -> bool:
        found = row(node, other)
        return found is not None and found["online"] and set(models) <= set(found["models"])

    wait_until(has, timeout=patience(20), interval=0.05, what=f"{node.name} to see {other.name}'s models {models}")


def pinned(node: NodeProc) -> list[str]:
    return [p["id"] for p in api(node, "GET", "/pair")["peers"]]


def jobs(node: NodeProc) -> list[dict[str, Any]]:
    return list(api(node, "GET", "/jobs")["jobs"])


def job(node: NodeProc, job_id: str) -> dict[str, Any] | None:
    return next((j for j in jobs(node) if j["id"] == job_id), None)
