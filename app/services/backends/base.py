"""One interface for every kind of upstream: a local engine, a peer, a rented endpoint.

``open`` sends the request and reads the first chunk before returning, so a
failure or a cold start can still fail over (the dstack lesson). Once it has
returned, the caller has committed to this upstream.

Everything the router, the planner, the inventory and inference read from an
upstream is declared on ``Upstream`` (nothing is found with ``getattr``):
``remote``, ``listed``, ``shared_with_cluster``, ``scrub`` and the ``Caller``
that ``ineligible_reason_for`` judges. ``in_flight`` is owned by ``InFlight``
slots (``upstream.slot()``), never counted by hand.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

from app.services.backends.windows import context_length_of
from app.services.errors import UpstreamError
from app.services.jobs.requester import Requester
from app.services.json_types import JsonObject
from app.services.secrets import redact
from app.services.translate.shapes import Api, Operation, canonical_model
from app.services.upstream_facts import UpstreamFacts, UpstreamKind

# Between two chunks of a started stream; well under a minute, so a stalled upstream fails in seconds.
DEFAULT_IDLE_TIMEOUT_S = 20.0


@dataclass
class Caller:
    """Who asked: a local app or key on this node, or a peer node relaying for its own caller."""

    requester: Requester
    origin_node: str | None = None
    origin_node_id: str | None = None
    job_id: str | None = None
    local_only: bool = False  # a relayed request is served here, never relayed onward
    from_peer: bool = False
    allow_off_lan: bool = True
    off_lan_rule: str = "setting off_lan: deny"  # what denies off-LAN, named in refusals


@dataclass
class UpstreamRequest:
    api: Api  # the API this upstream is spoken to in
    operation: Operation
    body: dict[str, Any]  # the rented upstream edits it as a dict of its own (rented/upstream.py)
    stream: bool
    client_api: Api
    requester: str = ""  # the caller's app hint (User-Agent)
    requester_key: str = ""  # the name of the key the caller presented on its node, if any
    origin_node_id: str = ""
    job_id: str = ""


class SpliceSink(Protocol):
    """Where a spliced stream's body pieces go, called from the upstream connection's own callbacks."""

    def piece(self, data: bytes) -> None: ...

    def ended(self, error: UpstreamError | None) -> None: ...


class Spliceable(Protocol):
    """An opened answer that can push its body to a sink as it arrives (``splice_client.Exchange``)."""

    def push_to(self, sink: SpliceSink) -> None: ...

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


@dataclass
class Opened:
    """An upstream response whose first chunk has arrived. ``splice`` is set when the answer came on
    the splice's own connection (``splice_client``): the writer may then take its body by push."""

    status: int
    content_type: str
    first_chunk: bytes
    rest: AsyncIterator[bytes]
    closer: Callable[[], Awaitable[object]]
    headers: dict[str, str] = field(default_factory=dict)
    serving_node: str = ""
    serving_node_id: str = ""
    engine: str = ""
    splice: Spliceable | None = None

    async def aclose(self) -> None:
        await self.closer()


@dataclass
class ModelEntry:
    """A model as one upstream serves it."""

    name: str  # as the upstream names it
    details: JsonObject = field(default_factory=dict)

    @property
    def canonical(self) -> str:
        return canonical_model(self.name)


class InFlight:
    """One request's claim on an upstream's ``in_flight``: counted when made, given back exactly once.

    Used as a context manager where the request ends inside the block; a stream that outlives the
    block is handed its own slot with ``hand_off()`` and calls ``release()`` when it closes.
    """

    def __init__(self, upstream: Upstream) -> None:
        self._upstream: Upstream | None = upstream
        upstream.in_flight += 1

    def release(self) -> None:
        if self._upstream is not None:
            self._upstream.in_flight -= 1
            self._upstream = None

    def hand_off(self) -> InFlight:
        """A slot that now owns this claim (this one then releases nothing)."""
        taken = InFlight.__new__(InFlight)
        taken._upstream, self._upstream = self._upstream, None
        return taken

    def __enter__(self) -> InFlight:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


class Upstream(ABC):
    kind: UpstreamKind
    key: str
    node_name: str
    node_id: str
    capacity: int = 4
    first_byte_timeout_s: float = 120.0  # until the first chunk (a cold start may take that long)
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    in_flight: int = 0
    # Reached only through another node (a peer's rented node): a relayed request never considers it.
    remote: bool = False
    # The names this node's user gave a model (``pairwise models same``), canonical, the name asked
    # first: set by the registry on this node's own copies only (a peer's names are its own claim).
    names: Callable[[str], list[str]] | None = None
    # The window the user declared where the engine says none (``--context-window``).
    declared_window: int | None = None

    @property
    def listed(self) -> bool:
        """Whether model lists here show this upstream's models (a peer's unshared rented node's are not)."""
        return True

    @property
    def shared_with_cluster(self) -> bool:
        """Whether a rented upstream is offered to peers (``cluster.facts.is_shareable``; engines always are)."""
        return False

    def scrub(self, text: str) -> str:
        """Error text fit for callers and peers (a rented node takes its URL and host out too)."""
        return redact(text)

    def slot(self) -> InFlight:
        """Claim a place in ``in_flight`` for one request (see ``InFlight``)."""
        return InFlight(self)

    @abstractmethod
    def models(self) -> list[ModelEntry]: ...

    @abstractmethod
    def api_for(self, client_api: Api) -> Api:
        """The API this upstream is spoken to in, for a caller of ``client_api``."""

    @abstractmethod
    async def open(self, request: UpstreamRequest) -> Opened: ...

    def upstream_model(self, canonical: str) -> str | None:
        """The name this upstream knows the model by: the asked name, else one the user linked to it."""
        entry = self.entry_for(canonical)
        return entry.name if entry is not None else None

    def entry_for(self, canonical: str) -> ModelEntry | None:
        by_canonical = self._model_index()
        for name in self.names(canonical) if self.names is not None else [canonical]:
            entry = by_canonical.get(name)
            if entry is not None:
                return entry
        return None

    # The planner asks every upstream for the model on every request: walking each list made the front
    # door's added time grow with the inventory (bench/inventory.py). Engines and peers replace their
    # list whole when it changes, so the list's identity (and length) says whether the index is its own.
    _indexed: tuple[list[ModelEntry], int, dict[str, ModelEntry]] | None = None

    def _model_index(self) -> dict[str, ModelEntry]:
        """Canonical name -> the first entry of ``models()`` with that name (as the walk used to find)."""
        models = self.models()
        indexed = self._indexed
        if indexed is not None and indexed[0] is models and indexed[1] == len(models):
            return indexed[2]
        by_canonical: dict[str, ModelEntry] = {}
        for entry in models:
            by_canonical.setdefault(entry.canonical, entry)
        self._indexed = (models, len(models), by_canonical)
        return by_canonical

    def window(self, canonical: str) -> int | None:
        """How many tokens (prompt and answer) one request may take on this copy; None if unknown."""
        if self.declared_window is not None:
            return self.declared_window
        entry = self.entry_for(canonical)
        return context_length_of(entry.details) if entry is not None else None

    async def count_tokens(self, model: str, text: str) -> int | None:
        """The engine's own count of ``text``'s tokens (its tokenizer endpoint), or None where it has none."""
        return None

    def ineligible_reason(self) -> str | None:
        """Why this upstream may not serve now, or None."""
        return None

    def ineligible_reason_for(self, caller: Caller) -> str | None:
        """Why this upstream may not serve this caller, or None.
        Rented nodes refine it (sharing off for peers, off-LAN denied); others defer to ``ineligible_reason``."""
        return self.ineligible_reason()

    def policy(self) -> str | None:
        """Routing policy of a rented upstream; None for LAN upstreams."""
        return None

    def display_name(self) -> str:
        return self.node_name if self.kind == "peer" else self.key.split(":", 1)[-1]

    def load(self) -> float:
        return self.in_flight / max(self.capacity, 1)

    def describe(self) -> UpstreamFacts:
        return {"key": self.key, "kind": self.kind, "node": self.node_name, "in_flight": self.in_flight}

    async def aclose(self) -> None:
        return None
