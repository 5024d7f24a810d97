"""JSON as the wire carries it: the types of a body that is parsed, read in part and passed on.

``JsonValue`` is what ``json.loads`` can return (a recursive alias: mypy follows it), ``JsonObject``
an object of them. A body whose fields the code reads has its own TypedDict where it is read
(``app/services/translate/wire.py``); these are for the parts only passed through, and for the
values that are narrowed (``isinstance``) before use, so a malformed body is a clear error, not a crash.
"""

from __future__ import annotations

from typing import TypeAlias

JsonScalar: TypeAlias = "str | int | float | bool | None"
JsonValue: TypeAlias = "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"
JsonArray: TypeAlias = "list[JsonValue]"
