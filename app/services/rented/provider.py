"""The provider seam: what Pairwise asks of the provider a rented node is rented from.

A provider is keyed by the declaration's ``provider`` string (``openai-compatible``, or any
that a feature or ``PAIRWISE_PROVIDERS`` registers) in a ``ProviderRegistry`` the ``RentedManager`` holds. Generic code (the
manager, the upstream, the service API, the tray) reads a rented node only through it:

- ``state(row) -> ProviderState``: the provider's own word normalised (``State``), whether it bills
  now, and the provider's own message;
- ``allowed(row, state)``: the actions (``Action``) a person may take now; ``capabilities``: all the
  actions it ever offers;
- ``pause`` / ``resume`` / ``stop`` / ``delete`` (by rented-node name): a provider without the
  capability refuses by name (``NotOffered``); ``stop_for_exit``: what pause on sponsor exit does;
- ``traits``: what the request path needs (``WireTraits``: its state words, per token, a wait header...);
- ``price(node) -> Price``: hourly, or per 1M input/output tokens;
- ``polls`` and ``poll(node)``: a provider with ``polls`` is driven by the one poll -> bill -> cap
  loop (``rented/provider_loop.py``); a provider whose nodes need more (a drift baseline, a price that
  follows the provider's list, an owed pause...) gives the same loop a ``Controller``
  (``provider_loop.py``) and leaves ``polls`` False;
- ``charge_due(name)`` / ``next_charge_in(name)``: bring a node's billed minutes up to now, and when the
  next one starts (a batch's budget reads them on the money clock);
- ``display_name``: how a person calls the provider (in messages and rows);
- ``decl_rules``: its declarations' defaults (cold start) and whether it finds a URL from
  ``endpoint: NS/NAME`` (``DeclRules``, read by ``decl.validate_decl`` through the registry).

A provider's own services (its account, its create operations) are kept in the registry under a
``ServiceKey`` (``registry.put(key, service)``, ``registry.get(key)``), so the node has one field
(``node.rented``) however many providers it has; operations any provider may offer (creating an
endpoint, starting a batch window) are found by what they do (``operations.py``).

``docs/adding-a-provider.md`` says how to write one. ``PAIRWISE_PROVIDERS=module:Class[,...]`` loads
providers from outside the app (for development and tests); a declaration naming a provider nobody
registered is refused by name.
The value types (``State``, ``ProviderState``, ``Action``, ``Price``) live in ``provider_state.py``,
which the upstream reads too.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast, runtime_checkable

from app.services.errors import ConfigError, RefusedError
from app.services.rented.decl import DeclRules
from app.services.rented.provider_state import Action, Price, ProviderState, State, WireTraits

if TYPE_CHECKING:
    from app.services.api.rows import RentedRow
    from app.services.rented.controller import Controller
    from app.services.rented.upstream import RentedUpstream


T = TypeVar("T")


class NotOffered(RefusedError):
    title = "Not offered by this provider"


class ServiceKey(Generic[T]):
    """Names one service of a provider (``ServiceKey[Account]("my-cloud", "account")``) in the registry: typed
    where it is read, kept by the provider's id and the service's role."""

    def __init__(self, provider: str, role: str) -> None:
        self.provider, self.role = provider, role

    def __repr__(self) -> str:
        return f"ServiceKey({self.provider!r}, {self.role!r})"


@runtime_checkable
class Provider(Protocol):
    name: str
    display_name: str
    capabilities: frozenset[Action]
    polls: bool
    traits: WireTraits
    decl_rules: DeclRules

    @property
    def controller(self) -> Controller | None: ...

    def state(self, row: RentedRow) -> ProviderState: ...

    def allowed(self, row: RentedRow, state: ProviderState) -> frozenset[Action]: ...

    def price(self, node: RentedUpstream) -> Price: ...

    async def pause(self, name: str) -> None: ...

    async def resume(self, name: str) -> None: ...

    async def stop(self, name: str) -> None: ...

    async def delete(self, name: str) -> None: ...

    async def stop_for_exit(self, name: str) -> None: ...

    async def stop_for_budget(self, name: str, cause: str, why: str) -> None: ...

    def refusal(self, action: Action, name: str) -> RefusedError: ...

    def charge_due(self, name: str) -> None: ...

    def next_charge_in(self, name: str) -> float | None: ...

    async def poll(self, node: RentedUpstream) -> ProviderState: ...


class BaseProvider:
    """What every provider shares: no action offered, the declared price, a state from the row."""

    name = "openai-compatible"
    display_name = "an OpenAI-compatible endpoint"
    capabilities: frozenset[Action] = frozenset()
    polls = False
    traits = WireTraits()
    decl_rules = DeclRules()

    @property
    def controller(self) -> Controller | None:
        """What drives this provider's nodes in the one loop (rented/controller.py); None: ``polls`` or nothing."""
        return None

    def state(self, row: RentedRow) -> ProviderState:
        # Nothing reports a state: an eligible node with an hourly price is taken to be billing.
        reported = row.get("reported_state")
        if reported:
            return ProviderState(State(reported), bool(row.get("reported_billing")), row.get("reported_message"))
        return ProviderState(State.UNKNOWN, row["state"] == "eligible" and bool(row["price_per_hour"]))

    def allowed(self, row: RentedRow, state: ProviderState) -> frozenset[Action]:
        return frozenset()

    def price(self, node: RentedUpstream) -> Price:
        if node.per_token:
            return Price(None, node.decl.price_per_mtok_in, node.decl.price_per_mtok_out)
        return Price(node.price_per_hour)

    def refusal(self, action: Action, name: str) -> RefusedError:
        """Why ``action`` is not offered, in words with the way on (a provider may say it better)."""
        return NotOffered(f"rented node {name}: its provider {self.name} cannot {action.value} it")

    async def pause(self, name: str) -> None:
        raise self.refusal(Action.PAUSE, name)

    async def resume(self, name: str) -> None:
        raise self.refusal(Action.RESUME, name)

    async def stop(self, name: str) -> None:
        raise self.refusal(Action.STOP, name)

    async def delete(self, name: str) -> None:
        raise self.refusal(Action.DELETE, name)

    async def stop_for_exit(self, name: str) -> None:
        """What pause on sponsor exit does: pause what can be paused, else stop it."""
        await (self.pause(name) if Action.PAUSE in self.capabilities else self.stop(name))

    async def stop_for_budget(self, name: str, cause: str, why: str) -> None:
        """What a batch's budget (or its end) does to a rented node only it used: pause what can be
        paused, else stop it. ``cause``/``why`` are for providers that record why (a window's cancel)."""
        await (self.pause(name) if Action.PAUSE in self.capabilities else self.stop(name))

    def charge_due(self, name: str) -> None:
        """Charge the minutes started by now (a polled provider's are charged at each poll)."""

    def next_charge_in(self, name: str) -> float | None:
        """Seconds until ``name``'s next billed minute starts; None: not known here (or not billing)."""
        return None

    async def poll(self, node: RentedUpstream) -> ProviderState:
        raise NotImplementedError(f"provider {self.name} is not polled")


class PlainProvider(BaseProvider):
    """Any OpenAI-compatible endpoint: nothing to manage, priced as declared (it may be TGI: /info is asked)."""

    traits = WireTraits(asks_info=True)


async def run_action(provider: Provider, action: Action, name: str) -> None:
    """Ask ``provider`` to take ``action`` on ``name`` (refused by name when it does not offer it)."""
    if action not in provider.capabilities:
        raise provider.refusal(action, name)
    step = {Action.PAUSE: provider.pause, Action.RESUME: provider.resume, Action.STOP: provider.stop,
            Action.DELETE: provider.delete}[action]
    await step(name)


class ProviderRegistry:
    """Providers by the declaration's provider string."""

    def __init__(self) -> None:
        self._providers: dict[str, Provider] = {}
        self._services: dict[tuple[str, str], object] = {}
        self.register(PlainProvider())

    def put(self, key: ServiceKey[T], service: T) -> None:
        """Keep one of a provider's own services (its account, its operations) where the API finds it."""
        self._services[(key.provider, key.role)] = service

    def get(self, key: ServiceKey[T]) -> T | None:
        """The service ``key`` names, or None when its provider is not set up on this node."""
        return cast("T | None", self._services.get((key.provider, key.role)))

    def holders(self, role: str) -> list[str]:
        """The providers that keep a service in ``role`` (operations any provider may offer: operations.py)."""
        return sorted(provider for provider, held in self._services if held == role)

    def register(self, provider: Provider) -> None:
        self._providers[provider.name] = provider

    def names(self) -> list[str]:
        return sorted(self._providers)

    def known(self, name: str) -> bool:
        return name in self._providers

    def of(self, name: str) -> Provider:
        provider = self._providers.get(name)
        if provider is None:
            raise ConfigError(f"no provider {name!r} on this node (known: {', '.join(self.names())})")
        return provider

    def decl_rules(self, provider: str) -> DeclRules | None:
        """What ``provider``'s declarations default to and allow; None for one not registered (the manager
        refuses it by name)."""
        known = self._providers.get(provider)
        return known.decl_rules if known is not None else None

    def by_endpoint(self) -> list[str]:
        """The providers that find a URL from ``endpoint: NS/NAME``."""
        return sorted(name for name, p in self._providers.items() if p.decl_rules.by_endpoint)

    def all(self) -> list[Provider]:
        return list(self._providers.values())

    def polled(self) -> list[Provider]:
        return [p for p in self._providers.values() if p.polls]

    def load(self, spec: str) -> list[Provider]:
        """``module:Class[,module:Class...]`` (``PAIRWISE_PROVIDERS``, for development and tests): each
        class is made with no argument and registered under its ``name``; the ones made, in order."""
        loaded: list[Provider] = []
        for item in filter(None, (part.strip() for part in spec.split(","))):
            module_name, _, class_name = item.partition(":")
            try:
                made = getattr(importlib.import_module(module_name), class_name)()
            except (ImportError, AttributeError, TypeError) as exc:
                raise ConfigError(f"PAIRWISE_PROVIDERS: cannot load {item!r}: {exc}") from exc
            if not isinstance(made, Provider):
                raise ConfigError(f"PAIRWISE_PROVIDERS: {item!r} is not a Provider (see docs/adding-a-provider.md)")
            self.register(made)
            loaded.append(made)
        return loaded


__all__ = ["Action", "BaseProvider", "NotOffered", "PlainProvider", "Price", "Provider", "ProviderRegistry",
           "ProviderState", "ServiceKey", "State", "WireTraits", "run_action"]
