"""What a rented upstream calls of its lifecycle hooks on a request's way (``hooks.LifecycleHooks``
is one), as a Protocol generic in the upstream, so ``upstream.py`` and ``hooks.py`` do not name
each other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

N = TypeVar("N", contravariant=True)  # the rented upstream the hooks are called with


class RouteHooks(Protocol[N]):
    @property
    def before_route(self) -> Sequence[object]: ...  # a controller would wake the node first

    @property
    def began(self) -> Callable[[N, str], None]: ...  # a request left for the node (job id), after any wake

    @property
    def abandoned(self) -> Callable[[N, str], None]: ...  # that attempt failed before an answer

    async def run_before_route(self, node: N, budget_s: float) -> None: ...
