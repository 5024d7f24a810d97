"""A paired peer as a routing candidate.

The peer answers in the caller's own API (its relay runs the whole request
way there, translation included), so ``api_for`` is the identity and the
body goes out as the caller sent it, with the model as the peer names it.

Load: requests we have in flight there (counted live by the request way)
plus what the peer last reported that did not come from us, over the
peer's capacity. Polls refresh the second part every couple of seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from app.services.backends.base import DEFAULT_IDLE_TIMEOUT_S, ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.cluster.facts import DEFAULT_FIRST_BYTE_S
from app.services.cluster.peer_client import PeerClient
from app.services.errors import UpstreamError, UpstreamTimeout
from app.services.keys.limit_text import limit_from_peer
from app.services.routing.names import MAX_GROUP
from app.services.translate.shapes import Api, canonical_model

# The peer may itself wait for a cold engine; give its answer a little longer than its own wait.
FIRST_BYTE_MARGIN_S = 15.0
# A stalled engine there is the peer's to report (its error chunk reaches our caller); we cut only after it.
IDLE_MARGIN_S = 5.0


class PeerUpstream(Upstream):
    kind = "peer"

    def __init__(self, client: PeerClient, my_node_id: str, on_unreachable: Callable[[], None],
                 off_lan_allowed: Callable[[], bool] = lambda: True) -> None:
        pin = client.pin
        self.client = client
        self.key = f"peer:{pin.node_id}"
        self.node_id, self.node_name = pin.node_id, pin.name
        self.capacity = 4
        self.first_byte_timeout_s = DEFAULT_FIRST_BYTE_S + FIRST_BYTE_MARGIN_S
        self.idle_timeout_s = DEFAULT_IDLE_TIMEOUT_S + IDLE_MARGIN_S
        self.in_flight = 0
        self.remote_in_flight = 0  # the peer's own load, not counting our requests there
        self.remote_total = 0
        self._my_id = my_node_id
        self._on_unreachable = on_unreachable
        self._off_lan_allowed = off_lan_allowed
        self._models: list[ModelEntry] = []
        self.updated_at = 0.0

    # -- state from the peer's inventory ---------------------------------------------------------------

    def update(self, inventory: dict[str, Any]) -> bool:
        """Take the peer's latest inventory; returns True if its model list changed."""
        models = []
        for row in inventory.get("models") or []:
            # Rented-only models are routed through PeerRentedView, under the rented node's policy.
            if isinstance(row, dict) and isinstance(row.get("name"), str) and row.get("lan", True) is not False:
                details = row.get("details")
                entry = ModelEntry(row["name"][:300], details if isinstance(details, dict) else {})
                models.append(entry)
                models.extend(aliases_of(entry, row.get("names")))
        load = _dict(inventory.get("load"))
        by_origin = _dict(load.get("by_origin"))
        self.remote_total = _int(load.get("in_flight"))
        self.remote_in_flight = max(0, self.remote_total - _int(by_origin.get(self._my_id)))
        self.capacity = max(1, _int(load.get("capacity"), 4))
        timeout = load.get("first_byte_timeout_s")
        if isinstance(timeout, (int, float)) and 0 < timeout < 3600:
            self.first_byte_timeout_s = float(timeout) + FIRST_BYTE_MARGIN_S
        idle = load.get("idle_timeout_s")
        if isinstance(idle, (int, float)) and 0 < idle < 3600:
            self.idle_timeout_s = float(idle) + IDLE_MARGIN_S
        changed = [m.name for m in models] != [m.name for m in self._models]
        self._models = models
        self.updated_at = time.monotonic()
        return changed

    def models(self) -> list[ModelEntry]:
        return self._models

    def api_for(self, client_api: Api) -> Api:
        return client_api

    def load(self) -> float:
        return (self.in_flight + self.remote_in_flight) / max(self.capacity, 1)

    def free_slots(self) -> int:
        return self.capacity - self.in_flight - self.remote_in_flight

    # -- a relayed request -----------------------------------------------------------------------------

    async def open(self, request: UpstreamRequest) -> Opened:
        headers = {
            "X-Pairwise-Api": request.api,
            "X-Pairwise-Op": request.operation,
            "X-Pairwise-Origin-Id": request.origin_node_id,
            "X-Pairwise-Requester": request.requester[:200],
            "X-Pairwise-Requester-Key": request.requester_key[:64],
            "X-Pairwise-Job": request.job_id,
            # This node's off-LAN rule travels with the request: a peer's rented node is off-LAN for us too.
            "X-Pairwise-Allow-Off-Lan": "1" if self._off_lan_allowed() else "0",
        }
        try:
            opened = await self.client.open_relay(request.body, headers, self.first_byte_timeout_s,
                                                  self.idle_timeout_s)
        except UpstreamError as exc:
            if exc.upstream_status == 429:
                # The sponsor refused our requester by one of its per-requester limits: keep it a
                # limit (429 for our caller, with the sponsor's words and wait), not a failure.
                raise limit_from_peer(exc.message) from None
            if exc.upstream_status is None and not isinstance(exc, UpstreamTimeout):
                # Nothing answered at all: stop routing there until a poll finds the peer again.
                self._on_unreachable()
            raise
        opened.serving_node = opened.headers.get("x-pairwise-node") or self.node_name
        opened.serving_node_id = opened.headers.get("x-pairwise-node-id") or self.node_id
        opened.engine = opened.headers.get("x-pairwise-engine", "")
        return opened

    def describe(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "node": self.node_name, "in_flight": self.in_flight,
                "remote_in_flight": self.remote_in_flight, "capacity": self.capacity,
                "models": [m.name for m in self._models]}


def aliases_of(entry: ModelEntry, names: Any) -> list[ModelEntry]:
    """The peer's other names for a model it serves: its claim covers its own copies (a request by one of
    them is relayed with that name, and the peer resolves it among its copies), never another node's."""
    if not isinstance(names, list):
        return []
    return [ModelEntry(n[:300], {**entry.details, "alias_of": entry.name}) for n in names[:MAX_GROUP]
            if isinstance(n, str) and n.strip() and canonical_model(n) != entry.canonical]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any, default: int = 0) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
