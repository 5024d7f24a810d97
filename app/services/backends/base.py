"""One interface for every kind of upstream: a local engine, a peer, a rented endpoint.

``open`` sends the request and reads the first chunk before returning, so a
failure or a cold start can still fail over (the dstack lesson). Once it has
returned, the caller has committed to this upstream.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from app.services.translate.shapes import Api, Operation, canonical_model

UpstreamKind = Literal["engine", "peer", "rented"]


@dataclass
class UpstreamRequest:
    api: Api  # the API this upstream is spoken to in
    operation: Operation
    body: dict[str, Any]
    stream: bool
    client_api: Api
    requester: str = ""
    origin_node_id: str = ""
    job_id: str = ""


@dataclass
class Opened:
    """An upstream response whose first chunk has arrived."""

    status: int
    content_type: str
    first_chunk: bytes
    rest: AsyncIterator[bytes]
    closer: Any
    headers: dict[str, str] = field(default_factory=dict)
    serving_node: str = ""
    serving_node_id: str = ""
    engine: str = ""

    async def aclose(self) -> None:
        await self.closer()


@dataclass
class ModelEntry:
    """A model as one upstream serves it."""

    name: str  # as the upstream names it
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def canonical(self) -> str:
        return canonical_model(self.name)


class Upstream(ABC):
    kind: UpstreamKind
    key: str
    node_name: str
    node_id: str
    capacity: int = 4
    first_byte_timeout_s: float = 120.0
    in_flight: int = 0

    @abstractmethod
    def models(self) -> list[ModelEntry]: ...

    @abstractmethod
    def api_for(self, client_api: Api) -> Api:
        """The API this upstream is spoken to in, for a caller of ``client_api``."""

    @abstractmethod
    async def open(self, request: UpstreamRequest) -> Opened: ...

    def upstream_model(self, canonical: str) -> str | None:
        for entry in self.models():
            if entry.canonical == canonical:
                return entry.name
        return None

    def ineligible_reason(self) -> str | None:
        """Why this upstream may not serve now, or None."""
        return None

    def ineligible_reason_for(self, caller: Any) -> str | None:
        """Why this upstream may not serve this caller (an ``inference.Caller``), or None.
        Rented nodes refine it (sharing off for peers, off-LAN denied); others defer to ``ineligible_reason``."""
        return self.ineligible_reason()

    def policy(self) -> str | None:
        """Routing policy of a rented upstream; None for LAN upstreams."""
        return None

    def display_name(self) -> str:
        return self.node_name if self.kind == "peer" else self.key.split(":", 1)[-1]

    def load(self) -> float:
        return self.in_flight / max(self.capacity, 1)

    def describe(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "node": self.node_name, "in_flight": self.in_flight}

    async def aclose(self) -> None:
        return None
