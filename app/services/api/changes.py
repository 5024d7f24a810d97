"""The one way a change's body becomes its model: a pydantic model per change (the run-time settings,
a key to make, a batch to run, a rented node's settings: ``RentedChange``, which lives with the rented
nodes in rented/change.py since their manager and a provider's create take it too), the same for the control routes, the CLI (which sends the model's JSON) and the tray
(which builds the model), so each setting has one spelling. A body the model refuses is a
``ConfigError`` (400) naming the field, never a half-applied change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeVar

from pydantic import Field

from app.services.errors import ConfigError
from app.services.rented.change import (
    OFF,
    BudgetChange,
    Given,
    LifecycleChange,
    RentedChange,
    RequestersChange,
    RoutingChange,
    TimeoutsChange,
    parse_given,
)

__all__ = ["OFF", "BatchOrder", "BudgetChange", "Change", "LifecycleChange", "NewKey", "RentedChange",
           "RequestersChange", "RoutingChange", "SettingsChange", "TimeoutsChange", "parse_given", "parsed"]


class Change(Given):
    """A change as a caller sends it: unknown fields are refused by name (a misspelt cap is no cap)."""


class SettingsChange(Change):
    """The run-time settings to change, spelt as ``GET /settings`` reads them; None leaves one as it is."""

    off_lan: str | None = None  # allow | deny (checked by name: the message says which words work)


class NewKey(Change):
    """A key to make (``pairwise keys create``, ``POST /keys``, the Keys view)."""

    name: str
    models: list[str] = Field(default_factory=list)  # fnmatch patterns; empty = every model
    off_lan: Literal["allow", "deny"] = "allow"
    usd_per_day: float | None = None  # spend cap on rented nodes per UTC day (the store checks the ranges)
    requests_per_min: int | None = None  # to rented nodes


class BatchOrder(Change):
    """A batch to plan or run, as ``pairwise batch plan|run``, ``POST /batches`` and the tray send it."""

    content: str = ""  # the JSONL text
    filename: str | None = None
    deadline: str | None = None  # a duration: 2h, 90m
    budget_usd: str | float | None = None
    rent: bool = False  # rent the batch window the plan proposes when the deadline cannot be met here
    completion_window: str | None = None
    endpoint: str | None = None


M = TypeVar("M", bound=Change)


def parsed(model: type[M], data: Mapping[str, object], *, error: type[ConfigError] = ConfigError) -> M:
    return parse_given(model, data, what=model.__name__, error=error)
