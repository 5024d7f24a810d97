"""The CLI's side of the control API: find the running node of a home and call it."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx

from app.home import Home
from app.services import errors
from app.services.errors import ControlError, PairwiseError
from app.services.platform.files import read_text

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
        # psutil, here and not at the top: `pairwise serve` imports this module but never asks.
        from app.services.platform.process import pid_alive

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
            raise rebuilt_error(data if isinstance(data, dict) else {"error": data}, response.status_code)
        return data

    def stream_lines(self, path: str) -> Iterator[dict[str, Any]]:
        try:
            with self._client.stream("GET", self.base + path, headers=self._headers, timeout=None) as response:
                for line in response.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.HTTPError as exc:
            raise ControlError(f"lost the node at {self.base}: {exc}") from exc


def rebuilt_error(body: dict[str, Any], status: int) -> PairwiseError:
    """The server's error as the class it raised: the control API sends the class's name as ``kind``
    and the CLI raises that class of app/services/errors.py's tree again, so a caller catches the
    branch it means (``NotFound``, ``RefusedError``) on either side of the socket. An unknown kind
    (a newer node) is a plain PairwiseError; title, message and status are the server's."""
    kind = body.get("kind")
    cls = error_class(kind) if isinstance(kind, str) else PairwiseError
    error = cls.__new__(cls)  # a subclass's own __init__ may want what only the server had
    PairwiseError.__init__(error, str(body.get("error", body)), title=body.get("title"))
    error.status = status
    return error


def error_class(kind: str) -> type[PairwiseError]:
    """The class of the tree called ``kind``, PairwiseError if none is."""
    found = _named(kind)
    if found is None:  # defined in a module this process has not imported: import those the tree names
        for module in _tree_modules():
            importlib.import_module(module)
        found = _named(kind)
    return found or PairwiseError


def _named(kind: str) -> type[PairwiseError] | None:
    pending: list[type[PairwiseError]] = [PairwiseError]
    while pending:
        cls = pending.pop()
        if cls.__name__ == kind and cls.__module__.startswith("app."):
            return cls
        pending.extend(cls.__subclasses__())
    return None


def _tree_modules() -> list[str]:
    """The modules the tree at the top of errors.py names ("jobs/store.py: ..."), as import paths."""
    found: list[str] = []
    for path in re.findall(r"\b([a-z0-9_]+(?:/[a-z0-9_]+)*)\.py:", errors.__doc__ or ""):
        dotted = path.replace("/", ".")
        for candidate in (f"app.services.{dotted}", f"app.{dotted}"):
            if importlib.util.find_spec(candidate) is not None:
                found.append(candidate)
                break
    return found
