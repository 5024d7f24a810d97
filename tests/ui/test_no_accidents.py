"""No value changes without the user meaning it: the wheel over an unfocused field changes nothing,
a money setting says what it changes before Apply and Apply names what it saved, removing a cap
asks (and Escape keeps it), Enter applies. Driven through the real node detail against the
simulated Hugging Face."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QMessageBox, QWidget

from app.services.api.changes import BudgetChange, RentedChange
from app.simulator import SimulatedHF
from app.ui import dialogs
from tests.ui.conftest import until
from tests.ui.helpers import hf, hf_facade, running_gpu


def wheel(widget: QWidget, notches: int = -3) -> None:
    """A real wheel turn over the middle of ``widget`` (down by default: what scrolling a pane does)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * notches), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def values(fields: list[QWidget]) -> list[Any]:
    return [f.text() if isinstance(f, QAbstractSpinBox) else f.currentText() for f in fields]  # type: ignore[union-attr]


async def detail_of_capped_gpu(app: Any, sim: SimulatedHF) -> Any:
    await running_gpu(app, sim, usd_per_day=10.0, usd_per_month=100.0, idle_pause_min=15)
    app.open_window()
    app.window.show_node("gpu")
    detail = app.window.detail
    await until(lambda: detail.own is not None and detail.day_cap.value() == 10.0, what="the budget fields")
    return detail


async def test_the_wheel_over_any_unfocused_field_changes_nothing(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    detail = await detail_of_capped_gpu(app, sim)
    fields = [w for w in detail.findChildren(QWidget) if isinstance(w, (QAbstractSpinBox, QComboBox))]
    assert {detail.day_cap, detail.month_cap, detail.idle_min} <= set(fields)
    before = values(fields)
    for field in fields:
        for notches in (-5, 5):
            wheel(field, notches)
            inner = field.lineEdit() if isinstance(field, QAbstractSpinBox) else None
            if inner is not None:
                wheel(inner, notches)  # the pointer over the number itself
    assert values(fields) == before
    assert not any(f.hasFocus() for f in fields)  # the wheel does not hand them the focus either
    assert detail.preview.text() == ""
    detail.refresh()
    assert detail.day_cap.value() == 10.0

    # Every field of every other window is guarded the same way (the wizard's are checked where it opens).
    detail.day_cap.setFocus()
    await until(lambda: detail.day_cap.hasFocus() or not app.window.isActiveWindow(), what="focus")
    if detail.day_cap.hasFocus():  # offscreen platforms give focus to an active window only
        wheel(detail.day_cap, 1)
        assert detail.day_cap.value() != 10.0  # a focused field is the user's own: the wheel is theirs


async def test_a_money_change_says_what_it_changes_and_removing_a_cap_asks(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    detail = await detail_of_capped_gpu(app, sim)
    detail.day_cap.setValue(0)
    assert detail.preview.text() == "Apply changes Daily budget: $10.00/day → no cap."
    detail.refresh()  # the 5-second refresh keeps what the user typed and has not applied
    assert detail.day_cap.value() == 0 and "→ no cap" in detail.preview.text()

    detail.apply_button.click()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question")
    assert isinstance(box, QMessageBox) and "daily budget ($10.00/day)" in box.text()
    assert box.defaultButton().text() == "Keep the cap"
    QTest.keyClick(box, Qt.Key.Key_Escape)
    await until(lambda: "the cap stays" in detail.message.text(), what="nothing saved")
    assert app.facade.rented_row("gpu")["budget"]["usd_per_day"] == 10.0

    detail.apply_button.click()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question again")
    QTest.keyClick(box, Qt.Key.Key_Return)  # Enter is the safe answer too
    await until(lambda: "the cap stays" in detail.message.text() and not dialogs.ACTIVE, what="nothing saved")
    assert app.facade.rented_row("gpu")["budget"]["usd_per_day"] == 10.0

    detail.apply_button.click()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question once more")
    next(b for b in box.buttons() if b.text() == "Remove the cap").click()
    await until(lambda: detail.message.text().startswith("gpu: saved"), what="saved")
    assert detail.message.text() == "gpu: saved Daily budget: $10.00/day → no cap."
    row = app.facade.rented_row("gpu")
    assert row["budget"] == {"usd_per_day": None, "usd_per_month": 100.0}
    assert row["lifecycle"]["idle_pause_min"] == 15  # only what changed was sent
    assert detail.preview.text() == ""


async def test_enter_applies_and_apply_sends_only_what_changed(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    detail = await detail_of_capped_gpu(app, sim)
    detail.idle_min.setValue(30)
    assert detail.preview.text() == "Apply changes Idle pause: after 15 min → after 30 min."
    detail.day_cap.setFocus()
    QTest.keyClick(detail.day_cap, Qt.Key.Key_Return)
    await until(lambda: detail.message.text().startswith("gpu: saved"), what="Enter applied")
    assert detail.message.text() == "gpu: saved Idle pause: after 15 min → after 30 min."
    row = app.facade.rented_row("gpu")
    assert row["lifecycle"]["idle_pause_min"] == 30 and row["budget"]["usd_per_day"] == 10.0

    detail.day_cap.setValue(12.5)
    QTest.keyClick(detail.day_cap, Qt.Key.Key_Enter)  # the keypad's Enter too; raising a cap asks nothing
    await until(lambda: "Daily budget: $10.00/day → $12.50/day" in detail.message.text(), what="the raise saved")
    assert app.facade.rented_row("gpu")["budget"]["usd_per_day"] == 12.5

    detail.apply_button.click()
    assert detail.message.text() == "gpu: nothing to save; every setting is as shown."


async def test_cancel_while_billing_defaults_to_pausing(sim: SimulatedHF, make_app: Any) -> None:
    from tests.ui.helpers import T4, sim_state
    from tests.ui.test_money_first import REPO, _at_progress

    await sim.control("POST", "/_sim/settings", {"initializing_s": 30.0})  # stays Initializing (billed)
    app = await make_app()
    wizard = await _at_progress(app, sim, {"name": "gpu", "model": REPO, **T4})
    await until(lambda: hf(wizard).progress.billing_started(), what="the endpoint created")
    wizard.reject()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question")
    assert box.defaultButton().text() == "Pause it" and box.escapeButton().text() == "Don't close"
    QTest.keyClick(box, Qt.Key.Key_Escape)
    await until(lambda: not dialogs.ACTIVE, what="Escape answered")
    assert wizard.isVisible() and hf(wizard).cancel_choice is None  # Escape keeps the wizard and the endpoint
    wizard.reject()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question again")
    QTest.keyClick(box, Qt.Key.Key_Return)
    await until(lambda: not wizard.isVisible(), what="the wizard closed")
    assert hf(wizard).cancel_choice == "pause"
    await until(lambda: sim_state(sim, "gpu") == "paused", what="paused on HF")


async def test_a_budget_warning_clears_with_its_cause(sim: SimulatedHF, make_app: Any) -> None:
    """Over budget, then the cap raised and the node resumed (from the tray, the window never shown): the
    menu, icon and tooltip all say billing, none keeps "paused: over budget"."""
    from tests.ui.helpers import REPO, T4, find_action, open_menu

    app = await make_app()
    await hf_facade(app).login(sim.demo_token)
    await app.facade.rented_create({"name": "gpu", "model": REPO, **T4, "budget": {"usd_per_day": 0.02},
                                    "scale_to_zero_min": 600})
    await until(lambda: any(n.title == "gpu paused: over budget" for n in app.notifier.attention),
                timeout=30, what="the budget warning")
    await until(lambda: (app.facade.rented_row("gpu") or {}).get("provider_state") == "paused", what="paused here")
    assert "⚠ gpu paused: over budget" in open_menu(app)
    assert app.tray.state == "attention"

    await app.facade.rented_set("gpu", RentedChange(budget=BudgetChange(usd_per_day=50.0)))  # as `rented set` sends it
    open_menu(app)
    find_action(app.tray.menu, "Resume").trigger()
    await until(lambda: (app.facade.rented_row("gpu") or {}).get("billing"), timeout=30, what="billing again")
    menu = open_menu(app)
    assert not any("over budget" in str(item) for item in menu)
    assert app.tray.state == "billing" and not app.notifier.attention
    assert "1 GPU billing" in menu[0] and "1 GPU billing" in app.tray.icon.toolTip()
    assert not app.window.isVisible()  # cleared by its cause, not by the user looking


async def test_delete_from_the_tray_menu_asks_what_is_lost(sim: SimulatedHF, make_app: Any) -> None:
    from tests.ui.helpers import find_action, open_menu, sim_state

    app = await make_app()
    await running_gpu(app, sim)
    open_menu(app)
    find_action(app.tray.menu, "Delete…").trigger()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question")
    assert "deletes the Hugging Face endpoint" in box.informativeText()
    assert box.defaultButton().text() == "Cancel"
    QTest.keyClick(box, Qt.Key.Key_Escape)
    await until(lambda: not dialogs.ACTIVE, what="Escape answered")
    assert app.facade.rented_row("gpu") is not None and sim_state(sim, "gpu") == "running"

    open_menu(app)
    find_action(app.tray.menu, "Delete…").trigger()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question again")
    next(b for b in box.buttons() if b.text() == "Delete").click()
    await until(lambda: app.facade.rented_row("gpu") is None, what="deleted")
    assert sim_state(sim, "gpu") is None
