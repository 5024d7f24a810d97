"""Hugging Face's pages of Add rented GPU: their ids and the choices made so far, apart from
``HfRentPages`` so that the pages (which ``pages.py`` imports) can read them without importing it back."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol, runtime_checkable

from app.services.api.plans import EndpointPlan, WindowPlan
from app.services.hf.api import HardwareOffer


class HfPage(IntEnum):
    SIGN_IN = 1
    MODEL = 2
    GPU = 3
    SETTINGS = 4
    CONFIRM = 5
    PROGRESS = 6


@dataclass
class Choice:
    namespaces: list[str] = field(default_factory=list)
    namespace: str | None = None
    model: str | None = None
    hardware: HardwareOffer | None = None  # a FlavorOffer for a batch window
    params: dict[str, Any] | None = None
    plan: EndpointPlan | None = None  # an endpoint's, once the settings page has planned it
    window_plan: WindowPlan | None = None  # a batch window's
    window: str | None = None  # a batch window's length ("120m"); None for an endpoint
    context_window: int | None = None  # the endpoint's context window in tokens; None: the engine's default
    same_as: list[str] = field(default_factory=list)  # the LAN names the user agreed are this model


class WizardState(Protocol):
    """What a page reads of the pages it is one of (``HfRentPages`` is one)."""

    choice: Choice
    sign_in_only: bool


@runtime_checkable
class OnRentPages(Protocol):
    """A page that ``HfRentPages`` made: it is given the pages' state when they are installed."""

    rent_state: WizardState | None


def state_or_none(page: object) -> WizardState | None:
    """The state a page reads; None before its pages installed it."""
    return page.rent_state if isinstance(page, OnRentPages) else None


def state_of(page: object) -> WizardState:
    """The state a page reads (a page only runs its steps once installed)."""
    state = state_or_none(page)
    if state is None:
        raise RuntimeError(f"{type(page).__name__} runs only on Hugging Face's pages of the rent wizard")
    return state
