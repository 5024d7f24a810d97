"""A change to a rented node, spelt as its declaration nests it (``{"budget": {"usd_per_day": 5}}``), and
the node settings a provider's create carries into the declaration it makes: the same sub-models, so
``pairwise rented set --budget-usd-per-day``, ``PATCH /rented/{name}``, the tray's detail view and a
``rented create`` all spell a cap one way.

- A field left out (or ``null``) leaves the setting as it is; ``"off"`` removes a cap, the idle
  pause, a context window or a CA file (what the CLI's ``--context-window 0`` and the tray's "no cap"
  send). A cap of 0 is a cap: nothing may bill.
- Unknown fields are refused by name, at every level: a misspelt cap is no cap. The older spellings
  (dotted keys ``"budget.usd_per_day"``, flat ``usd_per_day``) are refused naming the nested one.
- ``RentedChange.merged(data)``: the declaration's JSON with the change in it (validated again by
  ``decl.validate_decl``, so a change is refused whole or applied whole).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.services.errors import ConfigError
from app.services.rented.decl import OLDER_SPELLINGS, Policy, nested_spelling

Off = Literal["off"]
OFF: Off = "off"
Usd = Annotated[float, Field(ge=0)]
Minutes = Annotated[float, Field(gt=0)]


class Given(BaseModel):
    """What a caller sends: unknown fields refused by name, values of the wrong type too."""

    # Built at the first change read, not at import (every start imports the changes, few read one).
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)


class _Setting(Given):
    """A part of a rented node's settings: an older spelling is refused naming the nested one."""

    @model_validator(mode="before")
    @classmethod
    def _older_spellings(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key in data:
                moved = OLDER_SPELLINGS.get(key) if key not in cls.model_fields else None
                dotted = key if isinstance(key, str) and "." in key else None
                if moved or dotted:
                    raise ValueError(f"{key}: spelt {nested_spelling(moved or dotted or '')} now")
        return data


class RoutingChange(_Setting):
    use: Policy | None = None


class TimeoutsChange(_Setting):
    cold_start_s: Annotated[float, Field(gt=0)] | None = None


class LifecycleChange(_Setting):
    managed: bool | None = None
    wake_on_request: bool | None = None
    idle_pause_min: Minutes | Off | None = None
    pause_on_sponsor_exit: bool | None = None


class BudgetChange(_Setting):
    usd_per_day: Usd | Off | None = None
    usd_per_month: Usd | Off | None = None


class RequestersChange(_Setting):
    """Per-peer limits to set, by the peer's name or id (``*`` for peers not named); ``"off"`` removes
    that peer's entry, peers not named keep theirs."""

    usd_per_day: dict[str, Usd | Off] | None = None
    requests_per_min: dict[str, Annotated[int, Field(ge=1)] | Off] | None = None


class NodeSettings(_Setting):
    """The settings a provider's create carries into the new node's declaration."""

    share_with_cluster: bool | None = None
    routing: RoutingChange | None = None
    timeouts: TimeoutsChange | None = None
    lifecycle: LifecycleChange | None = None
    budget: BudgetChange | None = None

    def declared(self) -> dict[str, Any]:
        """These settings as a declaration's parts (``"off"`` is no value: a new node has none)."""
        return _merge({}, self)


class RentedChange(NodeSettings):
    """``pairwise rented set``, ``PATCH /rented/{name} {"changes": ...}`` and the tray's editors."""

    requesters: RequestersChange | None = None
    models: list[str] | None = None  # [] clears them
    allow_models: list[str] | None = None  # [] clears the allowlist
    gpu: str | None = None
    price_per_hour: Usd | None = None
    price_per_mtok_in: Usd | None = None
    price_per_mtok_out: Usd | None = None
    url: str | None = None
    ca_file: str | Off | None = None
    context_window: Annotated[int, Field(ge=1)] | Off | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_rename(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "name" in data:
            raise ValueError("a rented node cannot be renamed; detach it and attach it again")
        return data

    def merged(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The declaration's JSON ``data`` with this change in it (to be validated again)."""
        return _merge(dict(data), self)


def _merge(data: dict[str, Any], change: BaseModel) -> dict[str, Any]:
    for key in change.model_fields_set:
        value = getattr(change, key)
        if value is None:
            continue  # left as it is
        if isinstance(value, BaseModel):
            data[key] = _merge(dict(data.get(key) or {}), value)
        elif isinstance(value, dict):  # a per-peer table: entries named are set or removed, others kept
            table = dict(data.get(key) or {})
            table.update(value)
            data[key] = {k: v for k, v in table.items() if v != OFF}
        else:
            data[key] = None if value == OFF else value
    return data


G = TypeVar("G", bound=Given)


def parse_given(model: type[G], data: object, *, what: str = "change",
                error: type[ConfigError] = ConfigError) -> G:
    """``data`` as ``model``, or ``error`` (a ``ConfigError``, 400) naming the first field it refuses;
    nothing is applied."""
    if not isinstance(data, Mapping):
        raise error(f"{what} must be a JSON object")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        errors = exc.errors()
        where = _real_path(data, errors[0]["loc"])
        message = str(errors[0]["msg"]).removeprefix("Value error, ")
        if any(e["type"] == "literal_error" and _real_path(data, e["loc"]) == where and "'off'" in e["msg"]
               for e in errors[1:]):
            message += ', or "off" to remove it'
        raise error(f"{'.'.join(where)}: {message}" if where else message) from None


def _real_path(data: object, loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """The part of an error's location that names the body's own keys (not pydantic's union members)."""
    path: list[str] = []
    for part in loc:
        if not isinstance(data, Mapping) or part not in data:
            break
        path.append(str(part))
        data = data[part]
    return tuple(path)
