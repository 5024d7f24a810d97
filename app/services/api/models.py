"""``ModelsApi``: each model with its names and copies, and the user's word that names are one model.

    GET  /models                 {"models": [ModelRow...]}: names, and every copy (node, kind, window, load)
    POST /models/same {"names"}  link the names as one model on this node
    POST /models/unlink {"names"} take names out of the model they were linked into
    POST /models/undo            back to the names as they were before the last change
    GET  /models/suggest         names that look like one model (never linked without the user's word)
"""

from __future__ import annotations

from typing import TypedDict

from aiohttp import web

from app.services.backends.base import Upstream
from app.services.backends.engine import EngineUpstream
from app.services.errors import ConfigError, FeatureMissing
from app.services.events import NodeChanged
from app.services.frontdoor.control import Handler, json_body
from app.services.node import Node
from app.services.routing.names import ModelNames
from app.services.routing.suggest import model_key, suggest
from app.services.translate.shapes import canonical_model


class CopyRow(TypedDict):
    node: str  # the node it runs on (this node, a peer, a rented node)
    copy: str  # the engine, peer or rented node that serves it
    kind: str  # engine | peer | rented
    name: str  # the name that copy knows the model by
    window: int | None
    in_flight: int
    capacity: int


class ModelRow(TypedDict):
    names: list[str]
    copies: list[CopyRow]


class SuggestionRow(TypedDict):
    key: str
    names: list[str]
    command: str


def _copy_row(node: Node, upstream: Upstream, name: str) -> CopyRow:
    where = node.name if upstream.kind == "engine" else upstream.node_name
    return {"node": where, "copy": upstream.display_name(), "kind": upstream.kind, "name": name,
            "window": upstream.window(canonical_model(name)), "in_flight": upstream.in_flight,
            "capacity": upstream.capacity}


class ModelsApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    @property
    def names(self) -> ModelNames:
        if self.node.registry.names is None:
            raise FeatureMissing("this node keeps no model names")
        return self.node.registry.names

    def models(self) -> list[ModelRow]:
        rows: dict[str, ModelRow] = {}
        for upstream in self.node.registry.all():
            for entry in upstream.models():
                if entry.details.get("alias_of"):  # a peer's other name for a model it lists already
                    continue
                group = self.names.group_of(entry.name)
                key = min(canonical_model(n) for n in group)
                row = rows.setdefault(key, {"names": list(group), "copies": []})
                if entry.name not in row["names"]:
                    row["names"].append(entry.name)
                row["copies"].append(_copy_row(self.node, upstream, entry.name))
        return [rows[k] for k in sorted(rows)]

    def copies_like(self, name: str) -> list[CopyRow]:
        """The LAN copies (engines, peers) of the model ``name`` is: by the names the user linked, else by a
        name that looks like the same model (``models suggest``'s key). What a bigger rented copy adds to."""
        key = model_key(name)
        wanted = {canonical_model(n) for n in self.names.group_of(name)}
        found: list[CopyRow] = []
        for row in self.models():
            names = row["names"]
            if wanted & {canonical_model(n) for n in names} or (key and any(model_key(n) == key for n in names)):
                found.extend(c for c in row["copies"] if c["kind"] != "rented")
        return found

    def _changed(self) -> None:
        self.node.bus.publish(NodeChanged(node=self.node.name, reason="model names changed"))

    def same(self, names: list[str]) -> list[str]:
        joined = self.names.same(names)
        self._changed()
        return joined

    def unlink(self, names: list[str]) -> list[list[str]]:
        changed = self.names.unlink(names)
        self._changed()
        return changed

    def undo(self) -> list[list[str]]:
        groups = self.names.undo()
        self._changed()
        return groups

    async def suggest(self) -> list[SuggestionRow]:
        named: list[tuple[str, str | None]] = []
        for upstream in self.node.registry.all(local_only=True):
            for entry in upstream.models():
                basename = size = None
                if isinstance(upstream, EngineUpstream) and upstream.decl.api == "ollama":
                    shown = await upstream.show(entry.name)
                    info = shown.get("model_info") if shown else None
                    if isinstance(info, dict):
                        basename, size = info.get("general.basename"), info.get("general.size_label")
                named.append((entry.name, model_key(entry.name, basename if isinstance(basename, str) else None,
                                                    size if isinstance(size, str) else None)))
        return [{"key": key, "names": names, "command": "pairwise models same " + " ".join(names)}
                for key, names in suggest(named, self.names.groups())]


def _names(body: dict[str, object]) -> list[str]:
    names = body.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not names:
        raise ConfigError("'names' must be a list of model names")
    return [str(n) for n in names]


def models_routes(api: ModelsApi) -> list[tuple[str, str, Handler]]:
    async def listing(request: web.Request) -> web.Response:
        return web.json_response({"models": api.models(), "groups": api.names.groups()})

    async def same(request: web.Request) -> web.Response:
        return web.json_response({"names": api.same(_names(await json_body(request)))})

    async def unlink(request: web.Request) -> web.Response:
        return web.json_response({"changed": api.unlink(_names(await json_body(request)))})

    async def undo(request: web.Request) -> web.Response:
        return web.json_response({"groups": api.undo()})

    async def suggestions(request: web.Request) -> web.Response:
        return web.json_response({"suggestions": await api.suggest()})

    return [("GET", "/models", listing), ("POST", "/models/same", same), ("POST", "/models/unlink", unlink),
            ("POST", "/models/undo", undo), ("GET", "/models/suggest", suggestions)]
