"""The CLI's side of the control API: find the running node of a home and call it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from app.home import Home
from app.services.errors import ControlError, PairwiseError
from app.services.platform.files import read_text
from app.services.platform.process import pid_alive

PREFIX = "/_pairwise/v1"


class ControlClient:
    def __init__(self, home: Home, timeout_s: float = 30.0) -> None:
        self.home = home
        runtime = self.runtime(home)
        if runtime is None:
            raise ControlError(f"no node is running with home {home.root} (start one with 'pairwise serve')")
        self.base = f"http://{runtime['listen']}{PREFIX}"
        self._headers = {"Authorization": f"Bearer {home.control_token()}"}
        self._client = httpx.Client(timeout=timeout_s, trust_env=False)

    @staticmethod
    def runtime(home: Home) -> dict[str, Any] | None:
        """The running node's runtime file, or None when no node runs (a killed node leaves a stale file)."""
        try:
            data = json.loads(read_text(home.runtime_file))
            alive = pid_alive(int(data["pid"]))  # never os.kill(pid, 0): on Windows that sends Ctrl+C
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return data if alive and isinstance(data, dict) else None

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             params: dict[str, Any] | None = None, timeout_s: float | None = None) -> Any:
        try:
            response = self._client.request(method, self.base + path, json=body, params=params,
                                            headers=self._headers,
                                            timeout=timeout_s if timeout_s is not None else httpx.USE_CLIENT_DEFAULT)
        except httpx.HTTPError as exc:
            raise ControlError(f"could not reach the node at {self.base}: {exc}") from exc
        try:
            data = response.json()
        except ValueError:
            data = {"error": response.text}
        if response.status_code >= 400:
            error = PairwiseError(str(data.get("error", data)), title=data.get("title"))
            error.status = response.status_code
            raise error
        return data

    def stream_lines(self, path: str) -> Iterator[dict[str, Any]]:
        try:
            with self._client.stream("GET", self.base + path, headers=self._headers, timeout=None) as response:
                for line in response.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.HTTPError as exc:
            raise ControlError(f"lost the node at {self.base}: {exc}") from exc
