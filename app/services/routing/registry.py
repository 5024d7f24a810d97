"""Every upstream this node can route to, by key. Sources (engines, peers,
rented nodes) add and remove their upstreams here."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from app.services.backends.base import ModelEntry, Upstream
from app.services.routing.names import ModelNames
from app.services.translate.shapes import canonical_model


class UpstreamRegistry:
    def __init__(self, names: ModelNames | None = None) -> None:
        self.names = names  # the user's linked names; they cover this node's own copies only
        self._upstreams: dict[str, Upstream] = {}
        # Sources whose upstreams are computed on demand (e.g. peers' rented nodes).
        self._dynamic: list[Callable[[], Iterable[Upstream]]] = []

    def add(self, upstream: Upstream) -> None:
        if self.names is not None and upstream.kind != "peer" and not upstream.remote:
            upstream.names = self.names.names_of
        self._upstreams[upstream.key] = upstream

    def remove(self, key: str) -> Upstream | None:
        return self._upstreams.pop(key, None)

    def get(self, key: str) -> Upstream | None:
        return self._upstreams.get(key)

    def add_dynamic(self, source: Callable[[], Iterable[Upstream]]) -> None:
        self._dynamic.append(source)

    def all(self, *, local_only: bool = False) -> list[Upstream]:
        found = list(self._upstreams.values())
        for source in self._dynamic:
            found.extend(source())
        if local_only:
            found = [u for u in found if u.kind != "peer" and not u.remote]
        return found

    def inventory(self, *, local_only: bool = False) -> dict[str, list[tuple[Upstream, ModelEntry]]]:
        """canonical model name -> every (upstream, entry) that serves it."""
        merged: dict[str, list[tuple[Upstream, ModelEntry]]] = {}
        for upstream in self.all(local_only=local_only):
            for entry in upstream.models():
                merged.setdefault(canonical_model(entry.name), []).append((upstream, entry))
        return merged
