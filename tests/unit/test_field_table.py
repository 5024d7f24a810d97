"""One row per request field is the single source: the README's field tables are made from it, and
so is validation (every row's check is in the schema of the operations it names, and nothing else is)."""

from __future__ import annotations

from pathlib import Path

from app.services.translate.checks import AllOf, Check, Each, Fields
from app.services.translate.fields import OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA, F, Table
from app.services.translate.fields_dialects import ANTHROPIC_TO_CHAT, RESPONSES_TO_CHAT
from app.services.translate.fields_markdown import markdown
from app.services.translate.validate import ANTHROPIC, OLLAMA, OPENAI, RESPONSES, schema, segments

README = Path(__file__).resolve().parents[2] / "README.md"
TABLES = (OLLAMA_TO_OPENAI, OPENAI_TO_OLLAMA, RESPONSES_TO_CHAT, ANTHROPIC_TO_CHAT)


def test_readme_table_is_the_code_table() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("<!-- fields table: generated -->\n") + len("<!-- fields table: generated -->\n")
    end = text.index("<!-- end of fields table -->")
    assert text[start:end] == markdown(), "regenerate with app.services.translate.fields_markdown.markdown()"


def test_every_field_has_a_fate_and_refusals_say_why() -> None:
    for table in TABLES:
        for name, row in table.items():
            assert row.fate in ("passed", "translated", "dropped", "refused"), name
            assert row.fate != "refused" or row.how, f"{name} is refused without a reason"


def test_the_readme_shows_each_fields_check() -> None:
    text = markdown()
    assert "| `options.temperature` | a number | passed |" in text
    assert "| `n` | an integer from 1 to 128 (/v1/chat/completions, /v1/completions) | translated |" in text
    assert "| `max_tokens` | an integer of at least 1, required (/v1/messages) | passed |" in text


def found(check: Check, path: str) -> Check | None:
    """The check a compiled schema runs at ``path`` (a table path: ``a.b``, ``a[].b``), if any."""
    for part in segments(path):
        inner = check.checks if isinstance(check, AllOf) else (check,)
        nxt: Check | None = None
        for candidate in inner:
            if part == "[]" and isinstance(candidate, Each):
                nxt = candidate.item
            elif part != "[]" and isinstance(candidate, Fields) and part in candidate.spec:
                nxt = candidate.spec[part]
        if nxt is None:
            return None
        check = nxt
    return check


def checks_in(check: Check) -> list[Check]:
    return list(check.checks) if isinstance(check, AllOf) else [check]


def test_validation_is_made_from_the_rows() -> None:
    for table, schemas in ((OLLAMA_TO_OPENAI, OLLAMA), (OPENAI_TO_OLLAMA, OPENAI), (RESPONSES_TO_CHAT,
                                                                                     {"create": RESPONSES}),
                           (ANTHROPIC_TO_CHAT, ANTHROPIC)):
        for operation, made in schemas.items():
            for name, row in table.items():
                check = row.check_for(operation)
                at = found(made, name)
                if check is None:
                    assert at is None or all(c is not check for c in checks_in(at)), (operation, name)
                    continue
                assert at is not None and check in checks_in(at), f"{name} is not checked on {operation}"
            top = {name for name, row in table.items() if row.required_on(operation) and "." not in name
                   and "[" not in name}
            assert set(made.required) == top, operation


def test_a_row_added_to_a_table_is_checked_with_no_other_edit() -> None:
    from app.services.translate.checks import INT, InvalidRequest
    table: Table = {**OLLAMA_TO_OPENAI, "options.new_knob": F("dropped", "a test row", INT, on=("chat",))}
    made = schema(table, "chat")
    made({"model": "m", "options": {"new_knob": 3}}, "")
    try:
        made({"model": "m", "options": {"new_knob": "three"}}, "")
    except InvalidRequest as exc:
        assert exc.field == "options.new_knob" and "'options.new_knob' must be an integer" in exc.message
    else:
        raise AssertionError("the new row's check did not run")
    schema(table, "complete")({"model": "m", "prompt": "p", "options": {"new_knob": "three"}}, "")  # chat only
