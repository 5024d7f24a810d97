"""What a peer says about itself, bounded and cleaned before this node keeps or uses any of it.

A paired peer is trusted to be who it is, not to be right or modest: its inventory and facts are
proposals. Here they are cut to sizes this node chose (models per peer, names, engines, shared
rented nodes), stripped of control characters (a name reaches a response header and a terminal),
and the claims that would change this node's routing are replaced by this node's own rules: a
shared rented node is routed under the policy this node set for it (``when-no-local-node`` unless
the user raised it), and it is always sponsored by the peer that sent it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from app.services.backends.base import ModelEntry
from app.services.cluster.facts import clean_details
from app.services.json_types import JsonArray, JsonObject, JsonValue
from app.services.routing.names import MAX_GROUP
from app.services.text_safety import printable
from app.services.translate.shapes import canonical_model

MAX_MODELS = 512  # per peer: more than any real machine serves, far less than a flood
MAX_NAME = 200  # a model, engine or node name
MAX_TEXT = 300  # any other text (OS, GPU, a reason)
MAX_ENGINES = 32
MAX_SHARED_NODES = 16
MAX_CAPACITY = 256  # a peer's claimed slots: beyond this a claim only buys it more of our traffic
MAX_DETAIL_TEXT = 200
MAX_WINDOW = 1 << 22  # tokens: above any engine's window, so a bigger claim is noise
# The engine's own /api/show answer a peer relays (backends/engine_facts.py): its template and
# parameters are longer than a name, so they get their own bounds (text, keys, depth).
MAX_SHOW_TEXT = 16_384
MAX_SHOW_KEYS = 128
MAX_SHOW_DEPTH = 3
ENGINE_WORD = ("show", "loaded", "capabilities")  # kept as the engine said them, within those bounds

# The keys of a shared rented node's fact this node keeps, and their kinds.
_FACT_TEXT = ("id", "name", "label", "provider", "gpu", "state", "reason", "warning")
_FACT_FLAGS = ("shared", "eligible", "off_lan", "online", "simulated")
_FACT_NUMBERS = ("price_per_hour", "cold_start_s")
_FACT_COUNTS = ("in_flight", "capacity")


def name(value: object, limit: int = MAX_NAME) -> str | None:
    """A peer's name for something, printable and cut; None when it is not text or nothing is left."""
    if not isinstance(value, str):
        return None
    cleaned = printable(value, limit).strip()
    return cleaned or None


def count(value: object, default: int = 0, high: int = 1_000_000) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    return max(0, min(int(value), high))


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return max(0.0, min(float(value), 1e9))


def _details(value: object) -> JsonObject:
    if not isinstance(value, dict):
        return {}
    out: JsonObject = {}
    for key, item in clean_details(value).items():
        if key == "details" and isinstance(item, dict):
            inner = {k: _detail_value(v) for k, v in item.items()}
            out[key] = {k: v for k, v in inner.items() if v is not None}
        elif key in ENGINE_WORD:
            out[key] = _show_value(item, MAX_SHOW_DEPTH)
        elif (kept := _detail_value(item)) is not None:
            out[key] = kept
    return out


def _show_value(value: object, depth: int) -> JsonValue:
    """An engine's /api/show answer as a peer sent it: plain JSON, bounded in text, keys and depth."""
    if isinstance(value, str):
        return printable(value, MAX_SHOW_TEXT) if "\n" not in value else value[:MAX_SHOW_TEXT]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else None
    if depth <= 0:
        return None
    if isinstance(value, list):
        return [_show_value(v, depth - 1) for v in value[:MAX_SHOW_KEYS]]
    if isinstance(value, dict):
        return {printable(str(k), MAX_NAME): _show_value(v, depth - 1)
                for k, v in list(value.items())[:MAX_SHOW_KEYS]}
    return None


def _detail_value(value: object) -> JsonValue:
    if isinstance(value, str):
        return printable(value, MAX_DETAIL_TEXT)
    if isinstance(value, list):
        return [printable(v, MAX_DETAIL_TEXT) for v in value[:8] if isinstance(v, str)]
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else None
    return None


def inventory_models(rows: object) -> list[ModelEntry]:
    """The LAN models of a peer's inventory: at most ``MAX_MODELS``, each named once, cleaned.

    Rented-only models (``lan: false``) are left out: they are routed as that rented node, under
    this node's policy for it, never as the peer's LAN capacity."""
    models: list[ModelEntry] = []
    seen: set[str] = set()
    for row in rows if isinstance(rows, list) else []:
        if len(models) >= MAX_MODELS:
            break
        if not isinstance(row, dict) or row.get("lan", True) is False:
            continue
        model = name(row.get("name"))
        if model is None or model in seen:
            continue
        seen.add(model)
        entry = ModelEntry(model, _details(row.get("details")))
        models.append(entry)
        models.extend(_aliases(entry, row.get("names"), seen))
    return models[:MAX_MODELS]


def _aliases(entry: ModelEntry, names: object, seen: set[str]) -> list[ModelEntry]:
    """The peer's other names for a model it serves (``pairwise models same`` there): its claim covers
    its own copies (a request by one of them is relayed with that name, and the peer resolves it among
    its copies), never another node's. Cleaned and bounded like every name a peer sends."""
    aliases: list[ModelEntry] = []
    for given in names[:MAX_GROUP] if isinstance(names, list) else []:
        alias = name(given)
        if alias is None or alias in seen or canonical_model(alias) == entry.canonical:
            continue
        seen.add(alias)
        aliases.append(ModelEntry(alias, {**entry.details, "alias_of": entry.name}))
    return aliases


def facts(doc: Mapping[str, object]) -> JsonObject:
    """A peer's facts (for ``pairwise nodes``), bounded; shared rented nodes are cleaned by ``shared_node``."""
    engines: JsonArray = []
    given = doc.get("engines")
    for engine in (given if isinstance(given, list) else [])[:MAX_ENGINES]:
        if isinstance(engine, dict) and (engine_name := name(engine.get("name"))) is not None:
            engines.append({"name": engine_name, "api": name(engine.get("api"), 16),
                            "models": [*_names(engine.get("models"))], "in_flight": count(engine.get("in_flight")),
                            "capacity": count(engine.get("capacity"), 1, MAX_CAPACITY),
                            "ok": engine.get("ok") is True})
    hardware = doc.get("hardware")
    shared = doc.get("shared_nodes")
    return {
        "os": name(doc.get("os"), MAX_TEXT),
        "hardware": ({str(name(k, 64)): _detail_value(v) for k, v in list(hardware.items())[:32]}
                     if isinstance(hardware, dict) else None),
        "engines": engines,
        "shared_nodes": [n for n in (shared if isinstance(shared, list) else [])[:MAX_SHARED_NODES]
                         if isinstance(n, dict)],
    }


def _names(value: object) -> list[str]:
    out: list[str] = []
    for item in value if isinstance(value, list) else []:
        if len(out) >= MAX_MODELS:
            break
        if (cleaned := name(item)) is not None and cleaned not in out:
            out.append(cleaned)
    return out


def shared_node(fact: Mapping[str, object], *, sponsor: str, sponsor_id: str,
                policy: Callable[[str], str]) -> JsonObject | None:
    """A peer's shared rented node as this node routes it, or None if it has no usable id and name.

    ``policy`` is this node's rule for the node's id; what the sponsor claimed is kept only to be
    shown (``sponsor_policy``). The sponsor is the peer that sent the fact, whoever it names."""
    node_id, node_name = name(fact.get("id"), 128), name(fact.get("name"))
    if node_id is None or node_name is None:
        return None
    out: JsonObject = {key: name(fact.get(key), MAX_TEXT) for key in _FACT_TEXT}
    out.update({key: fact.get(key) is True for key in _FACT_FLAGS})
    out.update({key: number(fact.get(key)) for key in _FACT_NUMBERS})
    out.update({key: count(fact.get(key), 0, MAX_CAPACITY) for key in _FACT_COUNTS})
    models = _names(fact.get("models"))
    out.update(id=node_id, name=node_name, kind="rented", off_lan=True, models=[*models],
               sponsor=sponsor, sponsor_id=sponsor_id, policy=policy(node_id),
               sponsor_policy=name(fact.get("policy"), 32))
    out["windows"] = {**_windows(fact.get("windows"), models)}
    return out


def _windows(given: object, models: list[str]) -> dict[str, int]:
    """The windows a peer claims for its rented node's models: only for the models it listed for that
    node (its claim covers its own copy), each a whole number of tokens up to ``MAX_WINDOW``."""
    if not isinstance(given, dict):
        return {}
    listed = set(models)
    return {model: value for model, value in list(given.items())[:MAX_MODELS]
            if model in listed and isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_WINDOW}
