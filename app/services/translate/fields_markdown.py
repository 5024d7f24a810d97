"""The README's field tables, made from the tables themselves (``fields.py`` and
``fields_dialects.py``), so the README cannot drift from what validation and the translators do
(``tests/unit/test_field_table.py``)."""

from __future__ import annotations

from collections.abc import Mapping

from app.services.translate.fields import OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA, Field, Table
from app.services.translate.fields_dialects import ANTHROPIC_TO_CHAT, RESPONSES_TO_CHAT
from app.services.translate.shapes import PATHS

Routes = dict[str, str]
ANTHROPIC_ROUTES: Routes = {"create": "/v1/messages", "count": "/v1/messages/count_tokens"}
TABLES: tuple[tuple[str, Table, Routes], ...] = (
    ("An Ollama caller, an OpenAI-API engine", OLLAMA_TO_OPENAI, {str(op): path for op, path in PATHS["ollama"].items()}),
    ("An OpenAI caller, an Ollama-API engine", OPENAI_TO_OLLAMA, {str(op): path for op, path in PATHS["openai"].items()}),
    ("An OpenAI Responses caller (/v1/responses), any engine: made a Chat Completions request", RESPONSES_TO_CHAT,
     {}),
    ("An Anthropic Messages caller (/v1/messages), any engine: made a Chat Completions request", ANTHROPIC_TO_CHAT,
     ANTHROPIC_ROUTES))


def check_text(row: Field, routes: Routes) -> str:
    """What a field must be, in an error's words; where, when not on every route; and if it must be there."""
    def where(operations: tuple[str, ...]) -> str:
        return ", ".join(dict.fromkeys(routes.get(op, op) for op in operations))

    if row.check is None:
        return ""
    if isinstance(row.check, Mapping):
        text = "; ".join(f"{where((operation,))}: {check.what}" for operation, check in row.check.items())
    else:
        text = row.check.what + (f" ({where(row.on)})" if row.on else "")
    if row.required is True:
        text += ", required"
    elif row.required:
        text += f", required ({where(row.required)})"
    return text


def markdown() -> str:
    """The README's field tables, from the tables above."""
    lines = []
    for title, table, routes in TABLES:
        lines += [f"**{title}** (any other field is refused by name)", "",
                  "| field | check | fate | how |", "| --- | --- | --- | --- |"]
        lines += [f"| `{name}` | {check_text(row, routes).replace('|', '/')} | {row.fate} | {row.how.replace('|', '/')} |"
                  for name, row in table.items()]
        lines.append("")
    return "\n".join(lines)
