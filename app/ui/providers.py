"""The tray's side of the provider seam: what a provider brings to the tray, registered at start.

Generic views never import a provider's package. They read a rented row's ``provider`` and ask this
table for its ``TrayProvider``: the name a person reads ("Acme Cloud"), the page of an endpoint on
the provider's site, what ends its billing when Pairwise does not, and its optional parts: its
pages of Add rented GPU (``RentPages``), its choices on the wizard's Attach page, its account box in
Settings and the renderings of its own events. The tray's composition (``app/ui/compose.py``, which
``launch.py``, the demo and the tests call) registers every provider the build has; a provider
nobody registered is still worded by its id, so a row is never shown without a name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtWidgets import QGroupBox

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWizard

    from app.services.events import Event
    from app.ui.aio import Tasks
    from app.ui.facade import NodeFacade
    from app.ui.notify import Rendering

GENERIC_BACKSTOP = "until you stop it on its provider's site"


class RentPages(Protocol):
    """A provider's pages of the Add rented GPU wizard (``app/ui/wizard/wizard.py``), added to it by id."""

    first_id: int  # where the intro's "rent on this provider" and a sign-in-only wizard go
    sign_in_id: int  # the page a sign-in-only wizard shows alone

    def install(self, wizard: QWizard) -> None:
        """Add its pages (``wizard.setPage``) with ids that no other provider uses."""

    def mark_simulated(self) -> None:
        """Say on each page that speaks of the provider or of billing that both are simulated."""

    def holds_close(self) -> bool:
        """Cancel or close while this provider's pages must ask first (billing started): True to keep
        the wizard open (the pages ask and close it themselves)."""

    def cleanup(self) -> None:
        """The wizard is closing: stop what the pages poll."""


class AccountBox(QGroupBox):
    """A provider's account in Settings (who is signed in, Sign in, Sign out), read again with Settings."""

    def refresh(self) -> None:
        """Read the account again (a task: it may ask the provider)."""


@dataclass(frozen=True)
class RentOffer:
    """The intro's choice to rent on this provider, and the pages behind it."""

    label: str  # "Rent a GPU on Acme Cloud (creates an endpoint for you)"
    simulated_label: str
    pages: Callable[[NodeFacade, Tasks, bool], RentPages]  # (facade, tasks, sign_in_only)
    available: Callable[[NodeFacade], bool]  # renting is part of this build
    sign_in_title: str = ""  # the window title of a sign-in-only wizard


@dataclass(frozen=True)
class AttachChoice:
    """One provider of the Attach page's list; ``declare`` completes the declaration for what was typed."""

    provider: str
    label: str
    # (where, managed, declaration): True when it placed ``where`` itself (else it is the URL)
    declare: Callable[[str, bool, dict[str, Any]], bool] | None = None
    placeholder: str = ""  # the URL field's example
    manages: str = ""  # what "Let Pairwise pause and resume it" applies to ("Acme Cloud endpoints")


@dataclass(frozen=True)
class TrayProvider:
    key: str  # the provider's family, as the wizard and Settings find it
    name: str  # what a person reads
    ids: frozenset[str]  # the declarations' ``provider`` strings it covers
    backstop: str = GENERIC_BACKSTOP  # what ends its billing when Pairwise cannot pause it
    console_url: Callable[[str], str] | None = None  # an endpoint's page on the provider's site
    rent: RentOffer | None = None
    attach: tuple[AttachChoice, ...] = ()
    account_box: Callable[[NodeFacade, Tasks, Callable[[], None]], AccountBox] | None = None  # (.., sign in)
    renderings: Mapping[type[Event], Rendering] = field(default_factory=dict)


_REGISTERED: dict[str, TrayProvider] = {}


def register(provider: TrayProvider) -> None:
    """Add (or replace: registering twice is harmless) a provider's tray parts."""
    _REGISTERED[provider.key] = provider
    if provider.renderings:
        from app.ui.notify import add_renderings

        add_renderings(provider.renderings)


def unregister(key: str) -> None:
    """Forget a provider's tray parts (its renderings stay: an event of it still refreshes the views)."""
    _REGISTERED.pop(key, None)


def registered() -> list[TrayProvider]:
    return list(_REGISTERED.values())


def by_key(key: str) -> TrayProvider | None:
    return _REGISTERED.get(key)


def of(provider_id: object) -> TrayProvider | None:
    """The tray provider of a declaration's ``provider`` string, or None (nobody registered it)."""
    return next((p for p in _REGISTERED.values() if provider_id in p.ids), None)


def display_name(provider_id: object) -> str:
    """What a person reads for a row's provider: its registered name, else its id."""
    found = of(provider_id)
    return found.name if found is not None else (str(provider_id) if provider_id else "its provider")


def names(provider_ids: list[object]) -> str:
    """"Acme Cloud" for rows of one provider, "Acme Cloud and Beta GPU" for two."""
    seen: list[str] = []
    for provider_id in provider_ids:
        name = display_name(provider_id)
        if name not in seen:
            seen.append(name)
    return " and ".join(seen) if seen else "the provider"


def renting() -> list[TrayProvider]:
    """The providers that offer pages to rent a GPU, in the order they were registered."""
    return [p for p in _REGISTERED.values() if p.rent is not None]


def rent_names() -> str:
    """Who the tray can rent a GPU from, as a person reads it ("Acme Cloud")."""
    return " or ".join(p.name for p in renting()) or "a provider"
