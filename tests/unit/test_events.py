"""The event catalog: every kind has a JSON form (its fields) and a rendering in the tray."""

from __future__ import annotations

import json
import types
import typing
from dataclasses import fields
from typing import Any

import pytest

from app.services.events import Event, EventBus, Notice, from_json, kinds
from app.ui.compose import register_providers
from app.ui.notify import RENDERINGS, NotificationPolicy

register_providers()  # a provider's own kinds are rendered as it registers them, as the tray does at start

SAMPLES: dict[Any, Any] = {str: "x", float: 1.5, int: 2, bool: True}


def sample_value(hint: Any) -> Any:
    if hint in SAMPLES:
        return SAMPLES[hint]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return sample_value(next(a for a in typing.get_args(hint) if a is not type(None)))
    if origin is list:
        return [sample_value(typing.get_args(hint)[0])]
    if origin is dict:
        return {"id": "job-1", "model": "m"}
    raise AssertionError(f"event field type {hint!r} is not a JSON value")


def sample(cls: type[Event]) -> Event:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: sample_value(hints[f.name]) for f in fields(cls) if f.name != "at"}, at=1700000000.0)


ALL = sorted(kinds().values(), key=lambda cls: cls.kind)


def test_the_catalog_is_not_empty_and_kinds_are_unique() -> None:
    assert len(ALL) >= 20
    assert len({cls.kind for cls in ALL}) == len(ALL)


@pytest.mark.parametrize("cls", ALL, ids=lambda cls: cls.kind)
def test_each_kind_has_a_json_form_made_of_its_fields(cls: type[Event]) -> None:
    event = sample(cls)
    wire = json.loads(json.dumps(event.to_json()))
    assert wire == {"kind": cls.kind, "at": 1700000000.0,
                    **{f.name: getattr(event, f.name) for f in fields(cls) if f.name != "at"}}
    assert from_json(wire) == event
    assert isinstance(event.summary(), str) and event.summary()


@pytest.mark.parametrize("cls", ALL, ids=lambda cls: cls.kind)
def test_each_kind_has_a_rendering_in_the_tray(cls: type[Event]) -> None:
    assert cls in RENDERINGS, f"add {cls.__name__} to app.ui.notify.RENDERINGS (or its provider's renderings)"
    note = NotificationPolicy().on_event(sample(cls))
    assert (note is not None) == RENDERINGS[cls].notifies, f"{cls.__name__}: the policy and RENDERINGS disagree"
    if note is not None:
        assert note.kind == cls.kind and note.title


def test_an_unknown_kind_is_not_guessed() -> None:
    assert from_json({"kind": "from_a_newer_node", "at": 1.0}) is None
    assert from_json({"kind": "notice", "at": 1.0}) is None  # fields missing: not a notice


def test_the_bus_carries_the_typed_event() -> None:
    bus, seen = EventBus(), []
    stop = bus.on(seen.append)
    event = Notice(title="t", message="m")
    bus.publish(event)
    stop()
    bus.publish(event)
    assert seen == [event]
