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

from app.services.backends.base import DEFAULT_IDLE_TIMEOUT_S, ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.cluster import peer_facts
from app.services.cluster.facts import DEFAULT_FIRST_BYTE_S
from app.services.cluster.peer_client import PeerClient
from app.services.errors import UpstreamError, UpstreamTimeout
from app.services.json_types import JsonObject
from app.services.keys.limit_text import limit_from_peer, refusal_from_peer
from app.services.translate.shapes import Api
from app.services.upstream_facts import PeerFacts

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
        self.server_keepalive_s: float | None = None  # None: the peer did not say
        self._my_id = my_node_id
        self._on_unreachable = on_unreachable
        self._off_lan_allowed = off_lan_allowed
        self._models: list[ModelEntry] = []
        self.updated_at = 0.0

    # -- state from the peer's inventory ---------------------------------------------------------------

    def update(self, inventory: JsonObject) -> bool:
        """Take the peer's latest inventory; returns True if its model list changed."""
        # Bounded and cleaned; rented-only models are routed through PeerRentedView, under this
        # node's policy for that rented node.
        models = peer_facts.inventory_models(inventory.get("models"))
        load = _dict(inventory.get("load"))
        by_origin = _dict(load.get("by_origin"))
        self.remote_total = _int(load.get("in_flight"))
        self.remote_in_flight = max(0, self.remote_total - _int(by_origin.get(self._my_id)))
        self.capacity = max(1, min(_int(load.get("capacity"), 4), peer_facts.MAX_CAPACITY))
        timeout = load.get("first_byte_timeout_s")
        if isinstance(timeout, (int, float)) and 0 < timeout < 3600:
            self.first_byte_timeout_s = float(timeout) + FIRST_BYTE_MARGIN_S
        idle = load.get("idle_timeout_s")
        if isinstance(idle, (int, float)) and 0 < idle < 3600:
            self.idle_timeout_s = float(idle) + IDLE_MARGIN_S
        keepalive = load.get("keepalive_s")  # how long its cluster port keeps an idle connection
        self.server_keepalive_s = (float(keepalive) if isinstance(keepalive, (int, float))
                                   and not isinstance(keepalive, bool) and 0 < keepalive < 86400 else None)
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
            opened = await self.client.open_relay(
                request.body, headers, self.first_byte_timeout_s, self.idle_timeout_s,
                pass_through=request.stream and request.api == request.client_api)
        except UpstreamError as exc:
            if exc.upstream_status == 429:
                # The sponsor refused our requester by one of its per-requester limits: keep it a
                # limit (429 for our caller, with the sponsor's words and wait), not a failure.
                raise limit_from_peer(exc.message) from None
            refusal = refusal_from_peer(exc.message) if exc.upstream_status == 403 else None
            if refusal is not None:
                # Refused by the peer's policy (its rented node's cap reached before our facts said
                # so): our caller gets the same 403 as a caller there, unless another copy serves.
                raise refusal from None
            if exc.upstream_status is None and not isinstance(exc, UpstreamTimeout):
                # Nothing answered at all: stop routing there until a poll finds the peer again.
                self._on_unreachable()
            raise
        # The peer's words for who served: printable (they reach our caller's headers and the Jobs list).
        opened.serving_node = peer_facts.name(opened.headers.get("x-pairwise-node")) or self.node_name
        opened.serving_node_id = peer_facts.name(opened.headers.get("x-pairwise-node-id"), 64) or self.node_id
        opened.engine = peer_facts.name(opened.headers.get("x-pairwise-engine")) or ""
        return opened

    def describe(self) -> PeerFacts:
        return {"key": self.key, "kind": self.kind, "node": self.node_name, "in_flight": self.in_flight,
                "remote_in_flight": self.remote_in_flight, "capacity": self.capacity,
                "models": [m.name for m in self._models]}


def _dict(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _int(value: object, default: int = 0) -> int:
    return peer_facts.count(value, default)  # NaN, infinities and booleans are no counts
