"""Settings' "Models": two engines (real tiny model processes) serve one model under two names; the
view lists each with its copies and windows, offers the suggestion as a hint whose click still asks,
links them (after asking, saying the user's word is what makes them one) and unlinks them, each
change kept in the node's settings file."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from app.ui import dialogs
from tests.ui.conftest import until

OLLAMA_NAME = "qwen2.5:7b"
GGUF_NAME = "bartowski/Qwen2.5-7B-Instruct-GGUF"


def saved_groups(app: Any) -> list[list[str]]:
    return list(json.loads((app.node.home.root / "settings.json").read_text(encoding="utf-8"))["model_names"])


async def answer(what: str, *, yes: bool) -> QMessageBox:
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what=what)
    assert isinstance(box, QMessageBox)
    if yes:
        next(b for b in box.buttons() if b.text() == "Same model").click()
    else:
        QTest.keyClick(box, Qt.Key.Key_Escape)
    return box


async def test_link_and_unlink_names_in_settings(make_app: Any, tiny_factory: Any) -> None:
    ol = tiny_factory("--api", "ollama", "--model", OLLAMA_NAME)
    oa = tiny_factory("--api", "openai", "--model", GGUF_NAME)
    app = await make_app()
    await app.facade.engine_add({"name": "ol", "url": ol.url, "api": "ollama", "context_window": 8192}, None)
    await app.facade.engine_add({"name": "gg", "url": oa.url, "api": "openai"}, None)
    app.open_window()
    settings = app.window.settings
    settings.refresh()
    box = settings.models_box
    texts = box.texts()
    assert len(texts) == 2 and any(OLLAMA_NAME in t and "window 8192" in t and "on desk" in t for t in texts)
    assert not box.same_button.isEnabled() and not box.unlink_button.isEnabled()

    # The suggestion is a hint: one click asks, and saying no links nothing.
    await until(lambda: box.hint_buttons, what="the suggestion")
    box.hint_buttons[0].click()
    question = await answer("the question", yes=False)
    assert OLLAMA_NAME in question.text() and "only because you say so" in question.informativeText()
    await until(lambda: box.note.text() == "Nothing linked.", what="nothing linked")
    assert saved_groups(app) == [] and app.facade.model_groups() == []

    # Both models selected, "Same model…", yes: one model, in settings.
    for i in range(box.models.rowCount()):
        box.models.selectionModel().select(box.models.model().index(i, 0), QItemSelectionModel.SelectionFlag.Select)
    assert box.same_button.isEnabled()
    box.same_button.click()
    await answer("the question", yes=True)
    await until(lambda: box.note.text().startswith("One model now"), what="linked")
    assert sorted(saved_groups(app)[0]) == sorted([OLLAMA_NAME, GGUF_NAME])
    assert box.models.rowCount() == 1 and "window 8192" in box.texts()[0] and "window 4096" in box.texts()[0]
    await until(lambda: not box.hint_buttons, what="the suggestion gone once linked")

    box.models.selectRow(0)
    assert box.unlink_button.isEnabled()
    box.unlink_button.click()
    await until(lambda: box.note.text().startswith("Unlinked"), what="unlinked")
    assert saved_groups(app) == [] and box.models.rowCount() == 2
