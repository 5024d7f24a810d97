"""The Batches view against a real in-process node and a tiny engine: the empty state says how to
start one; a running batch shows its progress, rate and cost; Cancel asks first, then cancels it
with the done lines kept."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QMessageBox

from app.services.api.changes import BatchOrder
from app.ui import dialogs
from app.ui.views.batches import COLUMNS
from tests.ui.conftest import until

LINES = 120


def _content(count: int) -> str:
    return "".join(json.dumps({"custom_id": f"req-{i}", "method": "POST", "url": "/v1/chat/completions",
                               "body": {"model": "tiny", "messages": [{"role": "user", "content": f"line {i}"}],
                                        "max_tokens": 4}}) + "\n" for i in range(count))


def _row(view: Any, batch_id: str) -> dict[str, str] | None:
    view.refresh()
    for cells in view.cells():
        if cells[COLUMNS.index("Batch")] == batch_id:
            return dict(zip(COLUMNS, cells, strict=True))
    return None


def _done(row: dict[str, str] | None) -> int:
    return int(row["Progress"].split(" of ")[0]) if row else 0


async def test_batches_view_lists_progress_and_cancels_after_asking(make_app: Any, tiny_factory: Any) -> None:
    app = await make_app()
    app.open_window()
    window = app.window
    window.tabs.setCurrentWidget(window.batches)
    view = window.batches
    assert view.empty.isVisible() and not view.table.isVisible()
    assert "pairwise batch run FILE --model M" in view.empty.text() and "/v1" in view.empty.text()
    assert "Batch API" in view.empty.text()

    tiny = tiny_factory("--api", "openai", "--model", "tiny", "--first-byte-delay-s", "0.15")
    await app.facade.engine_add({"name": "tiny", "url": tiny.url, "api": "openai", "capacity": 1}, None)
    await until(lambda: any(e.get("models") for e in app.facade.engines()), what="the engine's models")
    started = await app.facade.api.batches.run(BatchOrder(content=_content(LINES)))
    batch_id = started["batch"]["id"]

    row = await until(lambda: (r := _row(view, batch_id)) and _done(r) >= 2 and r, timeout=60,
                      what="the batch's progress in the view")
    assert not view.empty.isVisible()
    assert row["Status"] == "running" and row["Model"] == "tiny" and f" of {LINES}" in row["Progress"]
    assert row["Failed"] == "–" and row["Cost so far"] == "$0.00"  # a local engine costs nothing
    await until(lambda: (r := _row(view, batch_id)) and r["Rate"].endswith("lines/s") and r["ETA"] != "–",
                timeout=30, what="a rate and an ETA")

    # Cancel asks first; keeping it running changes nothing.
    assert view.select(batch_id) and view.cancel_button.isEnabled()
    view.cancel_button.click()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question")
    assert isinstance(box, QMessageBox) and batch_id in box.windowTitle()
    assert "kept" in box.informativeText()
    next(b for b in box.buttons() if b.text() == "Keep running").click()
    await until(lambda: not dialogs.ACTIVE, what="the question to close")
    assert app.facade.api.batches.show(batch_id)["status"] == "in_progress"

    view.cancel_button.click()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question again")
    next(b for b in box.buttons() if b.text() == "Cancel batch").click()
    await until(lambda: app.facade.api.batches.show(batch_id)["status"] in ("cancelling", "cancelled"),
                what="the batch cancelling")
    assert "kept" in view.message.text()
    row = await until(lambda: (r := _row(view, batch_id)) and r["Status"] == "cancelled" and r, timeout=30,
                      what="the view to show it cancelled")
    assert not view.cancel_button.isEnabled()
    final = app.facade.api.batches.show(batch_id)
    kept = app.facade.api.batches.results(batch_id).decode().splitlines()
    assert 2 <= final["request_counts"]["completed"] < LINES
    assert len(kept) == final["request_counts"]["completed"]  # the done lines are kept in the output
    assert row["Rate"] == "–" and row["ETA"] == "–"
