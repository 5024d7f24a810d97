"""What a peer replicates is data, not terminal input: each job record is checked field by field.

A paired peer is trusted to say what it ran, not to put anything it likes into our database, CLI
or tray. ``checked_record`` keeps a record only if every field has the type ``Workload`` declares
(a list as ``model`` is refused, not stored), cuts text to a length, strips escape sequences and
control characters from it, and scrubs error text of URLs, hosts and token-like strings (a peer's
engine error may name its host). A refused record is named in the log with the reason.
"""

from __future__ import annotations

import math
from dataclasses import fields

from app.services.errors import RefusedError
from app.services.jobs.records import Workload
from app.services.json_types import JsonObject, JsonValue
from app.services.text_safety import printable, scrub_for_peer

TEXT_LIMIT = 200
ERROR_LIMIT = 1000
MAX_NESTED = 32  # keys of a structured field (a requester, for instance)

_DECLARED: dict[str, str] = {f.name: str(f.type) for f in fields(Workload)}


class RecordRefused(RefusedError, ValueError):
    """A replicated job record a peer sent that is not made of plain values of the declared kinds."""

    title = "Job record refused"


def _text(name: str, value: str) -> str:
    if name == "error":
        return scrub_for_peer(value, ERROR_LIMIT)
    return printable(value, TEXT_LIMIT)


def _scalar(name: str, value: JsonValue) -> JsonValue:
    if isinstance(value, str):
        return _text(name, value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float) and math.isfinite(value):
        return value
    raise RecordRefused(f"{name}: {type(value).__name__} is not a plain value")


def _field(name: str, declared: str, value: JsonValue) -> JsonValue:
    if value is None:
        if "None" not in declared:
            raise RecordRefused(f"{name} may not be empty")
        return None
    if declared.startswith("JobState"):
        return value  # checked against the states by the caller
    if declared.startswith("bool"):
        if not isinstance(value, bool):
            raise RecordRefused(f"{name} must be true or false")
        return value
    if declared.startswith(("float", "int")):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            raise RecordRefused(f"{name} must be a number of at least 0")
        if declared.startswith("int") and not float(value).is_integer():
            raise RecordRefused(f"{name} must be a whole number")
        return int(value) if declared.startswith("int") else value
    if declared.startswith("str"):
        if not isinstance(value, str):
            raise RecordRefused(f"{name} must be text, not {type(value).__name__}")
        return _text(name, value)
    # A structured field (declared as a class, such as the requester): a flat object of plain
    # values, or the plain text older nodes sent in its place.
    if isinstance(value, str):
        return _text(name, value)
    if not isinstance(value, dict) or len(value) > MAX_NESTED:
        raise RecordRefused(f"{name} must be an object of at most {MAX_NESTED} plain values")
    return {printable(k, TEXT_LIMIT): _scalar(f"{name}.{k}", v) for k, v in value.items()}


def checked_record(raw: JsonObject) -> JsonObject:
    """The record with every known field checked and cleaned; raises ``RecordRefused``."""
    clean: JsonObject = {}
    for name, declared in _DECLARED.items():
        if name in raw:
            clean[name] = _field(name, declared, raw[name])
    return clean
