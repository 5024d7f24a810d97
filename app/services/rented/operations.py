"""What a provider may offer beyond a rented node's actions: creating a rented endpoint, starting a
batch window. Generic code (``RentedApi.plan``/``create``/``window_*``, a batch's ``--rent``) asks for
them by what they do, never by provider.

A provider that offers one keeps its operations in the rented manager's registry under the offer's
key for the declaration's provider of what they create:
``manager.providers.put(WINDOWS.by("my-cloud"), ops)``. A provider loaded by ``PAIRWISE_PROVIDERS``
does so from its ``offer(manager)`` (``Offers``), called once it is registered.

Which provider answers (``Offer.of``): the one named (a batch's rent plan names the provider of its
window; a provider's own routes name themselves); else the only one offering it; several and none
named is refused by name. None offering it is ``NoProviderOffers``. A batch that may rent picks the
cheapest GPU among all of them itself (``Offer.among``, batch/plan.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, runtime_checkable

from app.services.errors import ConfigError, FeatureMissing
from app.services.rented.provider import ProviderRegistry, ServiceKey

if TYPE_CHECKING:
    from app.services.api.plans import EndpointPlan, WindowFlavor, WindowPlan
    from app.services.api.rows import RentedRow
    from app.services.json_types import JsonObject
    from app.services.rented.manager import RentedManager

T = TypeVar("T")


class NoProviderOffers(FeatureMissing):
    title = "Not offered on this node"


class EndpointOperations(Protocol):
    """Creates rented endpoints: what creating one would do (price, GPU, what the caps allow; nothing
    rented yet), and the create itself, which attaches the new endpoint as a managed rented node."""

    async def plan(self, params: JsonObject) -> EndpointPlan: ...

    async def create(self, params: JsonObject) -> RentedRow: ...


class WindowOperations(Protocol):
    """Starts batch windows: a GPU for a fixed time, billed from its start, that ends by itself."""

    async def flavors(self) -> list[WindowFlavor]: ...

    async def plan(self, params: JsonObject) -> WindowPlan: ...

    async def create(self, params: JsonObject) -> RentedRow: ...

    def extend(self, name: str) -> None: ...

    def logs(self, name: str, *, follow: bool, tail: int | None) -> AsyncIterator[tuple[str, str]]: ...


@runtime_checkable
class Offers(Protocol):
    """A provider from outside the app that offers operations: it puts them in ``manager.providers``."""

    def offer(self, manager: RentedManager) -> None: ...


class Offer(Generic[T]):
    """One kind of operations any provider may offer, found by ``of`` (or all of them by ``among``)."""

    def __init__(self, role: str, doing: str, missing: str) -> None:
        self.role, self.doing, self.missing = role, doing, missing

    def by(self, provider: str) -> ServiceKey[T]:
        """The key ``provider``'s operations of this kind are kept under."""
        return ServiceKey(provider, self.role)

    def among(self, registry: ProviderRegistry | None) -> dict[str, T]:
        """Every provider's operations of this kind, by provider (none without rented nodes)."""
        if registry is None:
            return {}
        found = {name: registry.get(self.by(name)) for name in registry.holders(self.role)}
        return {name: ops for name, ops in found.items() if ops is not None}

    def of(self, registry: ProviderRegistry | None, provider: str | None = None, *, missing: str | None = None) -> T:
        """The operations of ``provider``, or of the only provider offering them; ``NoProviderOffers``
        (saying ``missing``) when none does."""
        offered = self.among(registry)
        if provider is not None:
            if provider in offered:
                return offered[provider]
            if offered:
                raise NoProviderOffers(f"provider {provider!r} does not {self.doing} on this node "
                                       f"(these do: {', '.join(sorted(offered))})")
        if not offered:
            raise NoProviderOffers(missing or self.missing)
        if len(offered) > 1:
            raise ConfigError(f"several providers {self.doing} on this node ({', '.join(sorted(offered))}): "
                              "name one with 'provider'")
        return next(iter(offered.values()))


ENDPOINTS: Offer[EndpointOperations] = Offer(
    "endpoint operations", "create rented endpoints", "this node has no provider that creates rented endpoints attached")
WINDOWS: Offer[WindowOperations] = Offer(
    "window operations", "start batch windows", "this node has no batch-window operations attached")

__all__ = ["ENDPOINTS", "WINDOWS", "EndpointOperations", "NoProviderOffers", "Offer", "Offers", "WindowOperations"]
