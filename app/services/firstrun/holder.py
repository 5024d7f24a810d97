"""Who holds an address: asked over HTTP first (Ollama and Pairwise say who they are), then the OS.

The HTTP probe is one short GET to loopback; a TLS listener (a Pairwise cluster port) does not
answer it, so the OS is asked which process listens and its command line tells a Pairwise node.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

import httpx

from app.services.platform.sockets import ListeningProcess, listening_process

HolderKind = Literal["ollama", "pairwise", "other"]
PROBE_TIMEOUT_S = 1.0
PAIRWISE_HEADER = "X-Pairwise-Node"


@dataclass(frozen=True)
class PortHolder:
    kind: HolderKind
    version: str | None = None  # Ollama's
    node_name: str | None = None  # a Pairwise node's
    process: ListeningProcess | None = None

    def describe(self) -> str:
        if self.kind == "ollama":
            return f"Ollama {self.version}" if self.version else "Ollama"
        if self.kind == "pairwise":
            named = f" {self.node_name!r}" if self.node_name else ""
            running = f", {self.process.describe()}" if self.process else ""
            return f"another Pairwise node{named}{running}"
        if self.process is not None:
            return f"another program, {self.process.describe()}"
        return "another program (it does not answer as Ollama or Pairwise, and the OS did not name it)"


async def identify_holder(host: str, port: int, *, timeout_s: float = PROBE_TIMEOUT_S) -> PortHolder:
    probe_host = _loopback_for(host)
    answered = await _http_identity(probe_host, port, timeout_s)
    if answered is not None and answered.kind != "other":
        return answered
    process = await asyncio.to_thread(_process_on, port)
    if process is not None and _looks_like_pairwise(process):
        return PortHolder("pairwise", process=process)
    return PortHolder("other", process=process)


async def _http_identity(host: str, port: int, timeout_s: float) -> PortHolder | None:
    base = f"http://{_url_host(host)}:{port}"
    try:
        async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
            version = await client.get(f"{base}/api/version")
            node = version.headers.get(PAIRWISE_HEADER)
            if node is None:
                # A Pairwise front door answers its own control route (401 without the token) with its name.
                own = await client.get(f"{base}/_pairwise/v1/status")
                node = own.headers.get(PAIRWISE_HEADER)
    except (httpx.HTTPError, OSError):
        return None  # not HTTP (a TLS port), or it hung up: the OS is asked instead
    if node is not None:
        return PortHolder("pairwise", node_name=node)
    if version.status_code == 200:
        try:
            data = version.json()
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return PortHolder("ollama", version=data["version"])
    return PortHolder("other")


def _process_on(port: int) -> ListeningProcess | None:
    try:
        return listening_process(port)
    except Exception:  # the OS would not say: the message then says that it did not
        return None


def _looks_like_pairwise(process: ListeningProcess) -> bool:
    """The installed command (or bundle), or ``python -m app`` from a checkout."""
    program = [process.name, *process.command[:2]]
    if any(PurePath(part).name.lower().startswith("pairwise") for part in program if part):
        return True
    return process.command[1:3] == ["-m", "app"]


def _loopback_for(host: str) -> str:
    """A wildcard bind is probed through loopback."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "::1"
    return host


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
