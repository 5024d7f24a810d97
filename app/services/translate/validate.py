"""Request bodies checked before a job is opened, by the checks in each API's field table
(fields.py, fields_dialects.py): one schema per API and operation, made from the rows.

A row's path says where its check goes: ``options.temperature`` into the object ``options``,
``messages[].images`` into each message. A field no row checks is left to translation, which
refuses what cannot cross. A wrong value is a 400 that names the field by its path, e.g.
``messages[2].content``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from app.services.json_types import JsonObject
from app.services.translate.checks import AllOf, Check, Each, Fields, InvalidRequest
from app.services.translate.fields import OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA, Table
from app.services.translate.fields_dialects import ANTHROPIC_TO_CHAT, RESPONSES_TO_CHAT
from app.services.translate.shapes import Api, Operation

OPERATIONS: tuple[Operation, ...] = ("chat", "complete", "embed", "embed_legacy")


@dataclass
class _Node:
    check: Check | None = None
    required: bool = False
    keys: dict[str, _Node] = field(default_factory=dict)
    item: _Node | None = None


def segments(path: str) -> list[str]:
    """``messages[].content[].image_url`` -> ``messages``, ``[]``, ``content``, ``[]``, ``image_url``."""
    return [part for part in re.split(r"\.|(\[\])", path) if part]


def schema(table: Table, operation: str) -> Fields:
    """The check of a whole body of ``operation``, from the rows that apply to it."""
    root = _Node()
    for path, row in table.items():
        check = row.check_for(operation)
        if check is None:
            continue
        node = root
        for part in segments(path):
            if part == "[]":
                node.item = node.item or _Node()
                node = node.item
            else:
                node = node.keys.setdefault(part, _Node())
        node.check, node.required = check, row.required_on(operation)
    return Fields({name: _compiled(child) for name, child in root.keys.items()},
                  required=tuple(name for name, child in root.keys.items() if child.required))


def _compiled(node: _Node) -> Check:
    """A field's own check, then the checks of what its rows declare inside it (where it holds them)."""
    parts = [node.check] if node.check is not None else []
    if node.item is not None:
        parts.append(Each(_compiled(node.item)))
    if node.keys:
        parts.append(Fields({name: _compiled(child) for name, child in node.keys.items()},
                            required=tuple(name for name, child in node.keys.items() if child.required), loose=True))
    return parts[0] if len(parts) == 1 else AllOf(*parts)


OLLAMA: dict[Operation, Fields] = {operation: schema(OLLAMA_TO_OPENAI, operation) for operation in OPERATIONS}
OPENAI: dict[Operation, Fields] = {operation: schema(OPENAI_TO_OLLAMA, operation) for operation in OPERATIONS}
RESPONSES = schema(RESPONSES_TO_CHAT, "create")
ANTHROPIC = {operation: schema(ANTHROPIC_TO_CHAT, operation) for operation in ("create", "count")}


def refuse_non_finite(value: object, path: str) -> None:
    """NaN and Infinity are not JSON (Python's parser takes them; Ollama's and OpenAI's refuse them)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidRequest(path or "body", "a finite number (NaN and Infinity are not JSON)")
    if isinstance(value, dict):
        for name, item in value.items():
            refuse_non_finite(item, f"{path}.{name}" if path else str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            refuse_non_finite(item, f"{path}[{index}]")


def validate_request(api: Api, operation: Operation, body: JsonObject) -> None:
    """Raises InvalidRequest naming the first field of the wrong type or out of its range (NaN and
    Infinity first: they are no JSON at all, whatever the field)."""
    refuse_non_finite(body, "")
    (OLLAMA if api == "ollama" else OPENAI)[operation](body, "")
