"""The README's field table is the one the translators use."""

from __future__ import annotations

from pathlib import Path

from app.services.translate.fields import OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA
from app.services.translate.fields_dialects import ANTHROPIC_TO_CHAT, RESPONSES_TO_CHAT
from app.services.translate.fields_markdown import markdown

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_table_is_the_code_table() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("<!-- fields table: generated -->\n") + len("<!-- fields table: generated -->\n")
    end = text.index("<!-- end of fields table -->")
    assert text[start:end] == markdown(), "regenerate with app.services.translate.fields_markdown.markdown()"


def test_every_field_has_a_fate_and_refusals_say_why() -> None:
    for table in (OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA, RESPONSES_TO_CHAT, ANTHROPIC_TO_CHAT):
        for name, (fate, how) in table.items():
            assert fate in ("passed", "translated", "dropped", "refused"), name
            assert fate != "refused" or how, f"{name} is refused without a reason"
