"""The wizard's page ids and the choices made so far, apart from ``RentWizard`` so that its pages
(which ``wizard.py`` imports) can name them without importing the wizard back."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from app.services.hf.api import HardwareOffer

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWizardPage


class Page(IntEnum):
    INTRO = 0
    SIGN_IN = 1
    MODEL = 2
    GPU = 3
    SETTINGS = 4
    CONFIRM = 5
    PROGRESS = 6
    ATTACH = 7
    ATTACH_DONE = 8


@dataclass
class Choice:
    namespaces: list[str] = field(default_factory=list)
    namespace: str | None = None
    model: str | None = None
    hardware: HardwareOffer | None = None  # a FlavorOffer for a batch window
    params: dict[str, Any] | None = None
    plan: dict[str, Any] | None = None
    window: str | None = None  # a batch window's length ("120m"); None for an endpoint
    context_window: int | None = None  # the endpoint's context window in tokens; None: the engine's default
    same_as: list[str] = field(default_factory=list)  # the LAN names the user agreed are this model


@runtime_checkable
class WizardState(Protocol):
    """What a page reads of its wizard (``RentWizard`` is one)."""

    choice: Choice
    sign_in_only: bool


def state_or_none(page: QWizardPage) -> WizardState | None:
    """The rent wizard a page is on; None before the page is added to one."""
    wizard = page.wizard()
    return wizard if isinstance(wizard, WizardState) else None


def state_of(page: QWizardPage) -> WizardState:
    """The rent wizard a page is on (a page only runs its steps there)."""
    state = state_or_none(page)
    if state is None:
        raise RuntimeError(f"{type(page).__name__} runs only on the rent wizard")
    return state
