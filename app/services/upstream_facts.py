"""What an upstream says of itself (``Upstream.describe``): the engine list of the service API, a
node's facts and the routing logs read these. Only types live here, so every room may name them
(the base room in tests/unit/test_import_rules.py)."""

from __future__ import annotations

from typing import Literal, TypedDict

UpstreamKind = Literal["engine", "peer", "rented"]


class UpstreamFacts(TypedDict):
    """What every upstream says: which it is, whose, and how busy."""

    key: str
    kind: UpstreamKind
    node: str
    in_flight: int


class EngineFacts(UpstreamFacts):
    """A local engine (``engines list``, the tray's Engines, a node's facts)."""

    name: str
    url: str
    api: Literal["ollama", "openai"]
    capacity: int
    first_byte_timeout_s: float
    idle_timeout_s: float
    models: list[str]
    error: str | None
    windows: dict[str, int | None]
    context_window: int | None
    has_credential: bool


class PeerFacts(UpstreamFacts):
    """A paired peer as an upstream: its own load as well as ours there."""

    remote_in_flight: int
    capacity: int
    models: list[str]


class RentedFacts(UpstreamFacts):
    """A rented node as an upstream: its state and why."""

    label: str
    state: str
    reason: str | None
