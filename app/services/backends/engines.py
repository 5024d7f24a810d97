"""The engines a node adopts: declarations in settings, credentials in the
keyring, live upstreams in the registry, model lists kept fresh."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from pydantic import ValidationError

from app.home import NotSaved
from app.services.backends.engine import EngineUpstream
from app.services.errors import ConfigError, NotFound
from app.services.events import EventBus, NodeChanged
from app.services.routing.registry import UpstreamRegistry
from app.services.secrets import SecretStore
from app.services.upstream_facts import EngineFacts
from app.settings import EngineDecl, NodeSettings, SettingsStore

REFRESH_EVERY_S = 30.0


def engine_secret_key(name: str) -> str:
    return f"engine:{name}"


def validate_engine(data: Mapping[str, object]) -> EngineDecl:
    try:
        return EngineDecl.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid engine: {problems}") from exc


def add_engine_offline(store: SettingsStore, secrets: SecretStore, data: Mapping[str, object], token: str | None) -> EngineDecl:
    """Add an engine to a node that is not running (the settings file and keyring only)."""
    settings = store.load()
    decl = _prepare(settings, data, token)
    _save_with_token(store, settings, decl, secrets, token)
    return decl


def _save_with_token(store: SettingsStore, settings: NodeSettings, decl: EngineDecl, secrets: SecretStore,
                     token: str | None) -> None:
    """The engine's token into the keyring, then the engine into settings.json, then into ``settings``;
    a write that fails takes the token back out, so nothing is left half-added."""
    if token:
        secrets.set(engine_secret_key(decl.name), token)
    try:
        store.change(settings, lambda s: s.engines.append(decl), f"adding engine {decl.name}")
    except NotSaved:
        if token:
            secrets.delete(engine_secret_key(decl.name))
        raise


def _prepare(settings: NodeSettings, data: Mapping[str, object], token: str | None) -> EngineDecl:
    decl = validate_engine({**data, "has_credential": bool(token)})
    if settings.engine(decl.name):
        raise ConfigError(f"an engine named {decl.name!r} already exists; remove it first")
    return decl


class EngineManager:
    def __init__(self, settings: NodeSettings, store: SettingsStore, secrets: SecretStore, registry: UpstreamRegistry,
                 bus: EventBus, node_name: str, node_id: str, extra_ca: tuple[str, ...]) -> None:
        self.settings, self.store, self.secrets = settings, store, secrets
        self.registry, self.bus = registry, bus
        self.node_name, self.node_id, self.extra_ca = node_name, node_id, extra_ca
        self.upstreams: dict[str, EngineUpstream] = {}
        self._task: asyncio.Task[None] | None = None
        self._refreshing: asyncio.Future[None] | None = None

    def _make(self, decl: EngineDecl) -> EngineUpstream:
        token = self.secrets.get(engine_secret_key(decl.name)) if decl.has_credential else None
        return EngineUpstream(decl, node_name=self.node_name, node_id=self.node_id, token=token,
                              extra_ca=self.extra_ca)

    async def start(self) -> None:
        for decl in self.settings.engines:
            self._install(self._make(decl))
        # The front door opens without waiting for the engines' first answers; a request that
        # arrives meanwhile waits for them in refresh_stale (each look is bounded by its timeout).
        self._refreshing = asyncio.ensure_future(self.refresh_all())
        self._task = asyncio.create_task(self._refresh_loop(), name="engine-refresh")

    def _install(self, upstream: EngineUpstream) -> None:
        self.upstreams[upstream.name] = upstream
        self.registry.add(upstream)

    async def _refresh_loop(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_EVERY_S)
            await self.refresh_all()

    async def refresh_all(self) -> None:
        before = {n: [m.name for m in u.models()] for n, u in self.upstreams.items()}
        await asyncio.gather(*(u.refresh_models() for u in list(self.upstreams.values())))
        after = {n: [m.name for m in u.models()] for n, u in self.upstreams.items()}
        if before != after:
            self.bus.publish(NodeChanged(node=self.node_name, reason="engine models changed"))

    async def refresh_stale(self) -> None:
        """Refresh stale model lists, sharing one refresh among concurrent callers (the first
        look at the engines after start included)."""
        if self._refreshing is not None and not self._refreshing.done():
            await asyncio.shield(self._refreshing)
        if not any(u.is_stale() for u in self.upstreams.values()):
            return
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self.refresh_all())
        await asyncio.shield(self._refreshing)

    async def add(self, data: Mapping[str, object], token: str | None) -> EngineFacts:
        decl = _prepare(self.settings, data, token)
        _save_with_token(self.store, self.settings, decl, self.secrets, token)
        upstream = self._make(decl)
        self._install(upstream)
        await upstream.refresh_models()
        self.bus.publish(NodeChanged(node=self.node_name, reason=f"engine {decl.name} added"))
        return upstream.describe()

    async def remove(self, name: str) -> None:
        decl = self.settings.engine(name)
        if decl is None:
            raise NotFound(f"no engine named {name!r}")
        token = None
        if decl.has_credential:  # an engine without a token never touches the keyring
            token = self.secrets.get(engine_secret_key(name))
            self.secrets.delete(engine_secret_key(name))  # first: a keyring failure loses nothing
        def without(settings: NodeSettings) -> None:
            settings.engines = [e for e in settings.engines if e.name != name]

        try:
            self.store.change(self.settings, without, f"removing engine {name}")
        except NotSaved:
            if token:  # the engine stays, and so does its token
                self.secrets.set(engine_secret_key(name), token)
            raise
        upstream = self.upstreams.pop(name, None)
        if upstream:
            self.registry.remove(upstream.key)
            await upstream.aclose()
        self.bus.publish(NodeChanged(node=self.node_name, reason=f"engine {name} removed"))

    def describe(self) -> list[EngineFacts]:
        return [u.describe() for u in self.upstreams.values()]

    async def stop(self) -> None:
        for task in (self._task, self._refreshing):
            if task is not None:
                task.cancel()
        for upstream in self.upstreams.values():
            await upstream.aclose()
