"""A peer's rented node as seen from this node: a routing candidate of kind "rented" under the
node's own policy, so the scheduler here ranks it as paid, off-LAN capacity and never as a LAN
peer (a free local engine here wins over a peer's rented GPU under the default policy).

- Not shared: always refused, so a request for a model only that node serves is told which node
  it is and that sharing is off on its sponsor (instead of "model not found").
- Shared: served by relaying to the sponsor over mutual TLS; the sponsor forwards it and applies
  its own budget and lifecycle rules. The sponsor's inventory marks rented-only models
  (``lan: false``) so its peer upstream does not also offer them as LAN capacity.

The rows come from ``node.peer_rented_providers`` (the cluster puts each peer's ``shared_nodes``
there, and only those); a row is a peer's if its ``sponsor_id`` is not this node's id. The registry
reads these views on every request, so neither this node's own rented rows (their status, price,
models) nor each peer's own row (its whole model list) are made for them: both were made only to be
dropped, a cost on every request's way to its first byte (bench/README.md, "The rented link at 40 ms
RTT", and issue 31's "front door's own work"). A provider passed as ``own`` is not asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from app.services.backends.base import Caller, ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.errors import UpstreamError
from app.services.guard import collect
from app.services.rented.facts import peer_refusal
from app.services.translate.shapes import Api

log = logging.getLogger(__name__)

Rows = Callable[[], Iterable[Mapping[str, Any]]]
PeerLookup = Callable[[str], Upstream | None]


class PeerRentedView(Upstream):
    kind = "rented"
    remote = True  # never served from here: a relayed request never considers it

    def __init__(self, fact: Mapping[str, Any], sponsor: PeerLookup | None = None) -> None:
        self.fact = fact
        self._sponsor = sponsor
        self.key = f"peer-rented:{fact.get('id')}"
        self.node_name, self.node_id = str(fact.get("name")), str(fact.get("id"))
        self.in_flight = 0

    def models(self) -> list[ModelEntry]:
        windows = self.fact.get("windows")
        windows = windows if isinstance(windows, Mapping) else {}
        return [ModelEntry(str(m), {"owned_by": str(self.fact.get("provider")),
                                    **({"context_length": windows[m]} if windows.get(m) else {})})
                for m in self.fact.get("models") or []]

    def api_for(self, client_api: Api) -> Api:
        return client_api

    def display_name(self) -> str:
        return self.node_name

    @property
    def listed(self) -> bool:
        """Model lists here show only what callers here may use: not an unshared node's models."""
        return bool(self.fact.get("shared"))

    def policy(self) -> str | None:
        return str(self.fact.get("policy") or "when-no-local-node")

    def ineligible_reason(self) -> str | None:
        return peer_refusal(self.fact, None)

    def ineligible_reason_for(self, caller: Caller) -> str | None:
        return peer_refusal(self.fact, caller)

    async def open(self, request: UpstreamRequest) -> Opened:
        sponsor = self._sponsor(str(self.fact.get("sponsor_id"))) if self._sponsor else None
        if sponsor is None:
            raise UpstreamError(f"rented node {self.node_name} is reached only through its sponsor "
                                f"{self.fact.get('sponsor')}, which is not reachable now")
        opened = await sponsor.open(request)
        opened.headers.setdefault("x-pairwise-off-lan", self.node_name)
        return opened


class PeerRentedViews:
    """A dynamic registry source: one view per rented node of a peer."""

    def __init__(self, my_node_id: str, providers: Sequence[Rows], sponsor: PeerLookup | None = None, *,
                 own: Rows | None = None) -> None:
        self.my_node_id, self.providers, self.sponsor, self.own = my_node_id, providers, sponsor, own
        self._views: dict[str, PeerRentedView] = {}

    def __call__(self) -> list[Upstream]:
        seen: dict[str, PeerRentedView] = {}
        # The list is the node's own, still growing after this was made (the cluster joins later).
        providers = [provider for provider in self.providers if provider != self.own]
        # A provider's trouble must not break routing: it costs only its own rows (and is logged).
        for row in collect(providers, "a node-row provider", log):
            if row.get("kind") != "rented" or row.get("sponsor_id") in (None, self.my_node_id):
                continue
            key = str(row.get("id"))
            view = self._views.get(key) or PeerRentedView(row, self.sponsor)
            view.fact = row
            seen[key] = view
        self._views = seen
        return list(seen.values())
