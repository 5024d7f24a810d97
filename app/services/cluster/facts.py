"""What this node tells its peers: facts, shareable inventory and load.

Everything here crosses the cluster port, so it is built from an allowlist:
no engine URL (a rented endpoint's URL is not for peers), no error text (it
can quote a URL), no credential-bearing field, and model details reduced to
the keys the model listings need.

Load is reported per origin as well as in total, so a peer can subtract the
requests it has in flight here itself (it counts those live) and add the
rest: that is how the least-loaded owner in the cluster wins.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.services.backends.base import DEFAULT_IDLE_TIMEOUT_S, Upstream
from app.services.cluster.warm_pool import SERVER_KEEPALIVE_S
from app.services.guard import collect
from app.services.json_types import JsonArray, JsonObject
from app.services.platform.hardware import HardwareFacts, os_description
from app.services.routing.names import MAX_GROUP, ModelNames

if TYPE_CHECKING:
    from app.services.cluster.context import FactsNode

log = logging.getLogger(__name__)

# Model details a peer may see (the keys /api/tags and /v1/models rows are made of).
DETAIL_KEYS = ("modified_at", "size", "digest", "details", "owned_by", "created",
               "show", "capabilities", "loaded", "embeds",  # the engine's own word on its model (backends/engine_facts.py)
               "context_length")  # the largest window among the node's copies (routing/fit.py)
INNER_DETAIL_KEYS = ("parent_model", "format", "family", "families", "parameter_size", "quantization_level")
DEFAULT_FIRST_BYTE_S = 120.0


def is_shareable(upstream: Upstream) -> bool:
    """May peers be served by this upstream? Local engines always; a rented
    node only if it says it is shared with the cluster (``shared_with_cluster``)."""
    if upstream.kind == "engine":
        return True
    return upstream.kind == "rented" and upstream.shared_with_cluster is True


def shareable_upstreams(node: FactsNode) -> list[Upstream]:
    return [u for u in node.registry.all(local_only=True) if is_shareable(u)]


def clean_details(details: JsonObject) -> JsonObject:
    out = {k: details[k] for k in DETAIL_KEYS if k in details and k != "details"}
    inner = details.get("details")
    if isinstance(inner, dict):
        out["details"] = {k: inner[k] for k in INNER_DETAIL_KEYS if k in inner}
    return out


class LoadBook:
    """Requests this node serves for each peer right now (the relay keeps it)."""

    def __init__(self) -> None:
        self.by_origin: dict[str, int] = {}

    def enter(self, origin_id: str) -> None:
        self.by_origin[origin_id] = self.by_origin.get(origin_id, 0) + 1

    def leave(self, origin_id: str) -> None:
        left = self.by_origin.get(origin_id, 0) - 1
        if left > 0:
            self.by_origin[origin_id] = left
        else:
            self.by_origin.pop(origin_id, None)


def load_doc(upstreams: list[Upstream], book: LoadBook) -> JsonObject:
    timeouts = [u.first_byte_timeout_s for u in upstreams]
    idle = [u.idle_timeout_s for u in upstreams]
    return {
        "in_flight": sum(u.in_flight for u in upstreams),
        "capacity": sum(max(u.capacity, 1) for u in upstreams),
        "by_origin": dict(book.by_origin),
        "first_byte_timeout_s": max(timeouts) if timeouts else DEFAULT_FIRST_BYTE_S,
        "idle_timeout_s": max(idle) if idle else DEFAULT_IDLE_TIMEOUT_S,
        # How long the cluster port keeps an idle connection: a peer's warm pool lets go sooner.
        "keepalive_s": SERVER_KEEPALIVE_S,
    }


def inventory_doc(node: FactsNode, book: LoadBook) -> JsonObject:
    """Models peers may route here (each once, by the first owner's name) and load."""
    upstreams = shareable_upstreams(node)
    return {"id": node.node_id, "name": node.name, "models": [*model_rows(node, upstreams)],
            "load": load_doc(upstreams, book)}


def model_rows(node: FactsNode, upstreams: list[Upstream]) -> list[JsonObject]:
    """Each model once, by the first owner's name. ``lan`` says whether a LAN engine here serves the
    model. A model only a shared rented node serves is not LAN capacity: peers route it as that
    rented node, under its policy."""
    seen: dict[str, JsonObject] = {}
    for upstream in upstreams:
        for entry in upstream.models():
            row = seen.setdefault(entry.canonical, {"name": entry.name, "details": clean_details(entry.details),
                                                    "lan": False})
            row["lan"] = row["lan"] or upstream.kind == "engine"
            add_names_and_window(row, upstreams, entry.canonical, node.registry.names)
    return list(seen.values())


def add_names_and_window(row: JsonObject, upstreams: list[Upstream], canonical: str,
                         names: ModelNames | None) -> None:
    """The other names this node's user gave the model (``names``: peers route them here as the model),
    and the largest window among its copies here under any of them (``details.context_length``: this
    node picks the copy that holds a request)."""
    if names is not None:
        others: JsonArray = [n for n in names.names_of(canonical) if n != canonical]
        row["names"] = others[:MAX_GROUP]
    windows = [w for u in upstreams if u.upstream_model(canonical) is not None and (w := u.window(canonical))]
    details = row["details"]
    if windows and isinstance(details, dict):  # inventory_doc's own object
        details["context_length"] = max(windows)


def shared_engines(node: FactsNode) -> list[JsonObject]:
    return [
        {"name": u.name, "api": u.decl.api, "models": [m.name for m in u.models()], "in_flight": u.in_flight,
         "windows": {m.name: u.window(m.canonical) for m in u.models()},
         "capacity": u.capacity, "ok": u.last_error is None}
        for u in node.engines.upstreams.values()
    ]


def facts_doc(node: FactsNode, book: LoadBook, hardware: HardwareFacts) -> dict[str, object]:
    """What a peer shows of this node (``pairwise nodes``); sent as JSON, never read back here."""
    upstreams = shareable_upstreams(node)
    load = load_doc(upstreams, book)
    # One broken provider must not hide the node from its peers.
    shared = collect(node.shared_fact_providers, "a shared fact provider", log)
    return {
        "id": node.node_id,
        "name": node.name,
        "os": os_description(),
        "hardware": hardware,
        "engines": shared_engines(node),
        "models": sorted(str(m["name"]) for m in model_rows(node, upstreams)),
        "in_flight": load["in_flight"],
        "load": load,
        "shared_nodes": shared,
    }
