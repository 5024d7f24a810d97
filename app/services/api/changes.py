"""The one way a change's body becomes its model: a pydantic model per change (a key to make, a batch
to run...), the same for the control routes, the CLI (which sends the model's JSON) and the tray
(which builds the model), so each setting has one spelling. A body the model refuses is a
``ConfigError`` (400) naming the field, never a half-applied change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from app.services.errors import ConfigError


class Change(BaseModel):
    """A change as a caller sends it: unknown fields are refused by name (a misspelt cap is no cap)."""

    model_config = ConfigDict(extra="forbid", strict=True)


M = TypeVar("M", bound=Change)


def parsed(model: type[M], data: Mapping[str, object], *, error: type[ConfigError] = ConfigError) -> M:
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or model.__name__
        raise error(f"{where}: {first['msg']}") from None
