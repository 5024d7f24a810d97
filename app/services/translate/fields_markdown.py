"""The README's field tables, made from the tables themselves (``fields.py`` and
``fields_dialects.py``), so the README cannot drift from what the translators do
(``tests/unit/test_field_table.py``)."""

from __future__ import annotations

from app.services.translate.fields import OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA
from app.services.translate.fields_dialects import ANTHROPIC_TO_CHAT, RESPONSES_TO_CHAT


def markdown() -> str:
    """The README's field tables, from the tables above."""
    lines = []
    for title, table in (("An Ollama caller, an OpenAI-API engine", OLLAMA_TO_OPENAI),
                         ("An OpenAI caller, an Ollama-API engine", OPENAI_TO_OLLAMA),
                         ("An OpenAI Responses caller (/v1/responses), any engine: made a Chat Completions "
                          "request", RESPONSES_TO_CHAT),
                         ("An Anthropic Messages caller (/v1/messages), any engine: made a Chat Completions "
                          "request", ANTHROPIC_TO_CHAT)):
        lines += [f"**{title}** (any other field is refused by name)", "", "| field | fate | how |", "| --- | --- | --- |"]
        lines += [f"| `{name}` | {fate_} | {how.replace('|', '/')} |" for name, (fate_, how) in table.items()]
        lines.append("")
    return "\n".join(lines)
