"""The quit state machine, every way out of a quit that cannot pause: its buttons, the close button,
Escape, Enter, a stop signal, a second Quit, a pause landing meanwhile, an endpoint deleted on
Hugging Face. Each ends with the endpoint paused, or the user having chosen Quit anyway twice, or a
stop signal warned about; the app always answers. Against the simulated Hugging Face."""

from __future__ import annotations

import os
import signal
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.simulator import SimulatedHF
from app.ui.quitting import Exit, Phase, QuitDialog, StillBilling
from tests.ui.conftest import until
from tests.ui.helpers import find_action, open_menu, running_gpu, sim_state
from tests.ui.test_money_first import hf_down, hf_up


async def blocked_quit(app: Any, sim: SimulatedHF, count: int = 0) -> QuitDialog:
    """Quit while Hugging Face refuses: the dialog waiting for its ``count``+1-th answer."""
    if app.quit_dialog is None:
        await hf_down(sim)
        app.request_quit()
    dialog = await until(lambda: app.quit_dialog, what="the quit window")
    return await until(lambda: dialog if dialog.phase is Phase.BLOCKED and len(dialog.exits) == count
                       and dialog._choice is not None else None, timeout=40, what="the quit blocked")  # type: ignore[no-any-return]


async def finishes_paused(app: Any, sim: SimulatedHF) -> None:
    await until(lambda: app.is_closed(), timeout=40, what="the quit to finish")
    assert sim_state(sim, "gpu") == "paused"


async def test_close_escape_and_enter_all_mean_keep_trying(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    dialog = await blocked_quit(app, sim)
    dialog.close()  # the window's X
    await until(lambda: dialog.exits == [Exit.KEEP_TRYING], what="close read as Keep trying")
    assert dialog.isVisible() and not app.is_closed()

    dialog = await blocked_quit(app, sim, 1)
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    await until(lambda: dialog.exits[-1:] == [Exit.KEEP_TRYING] and len(dialog.exits) == 2, what="Escape")
    assert dialog.isVisible()

    dialog = await blocked_quit(app, sim, 2)
    dialog.quit_anyway.setFocus()  # the focus on the dangerous button, as after a click elsewhere
    assert not dialog.quit_anyway.isDefault() and dialog.keep_trying.isDefault()
    QTest.keyClick(dialog.quit_anyway, Qt.Key.Key_Return)
    await until(lambda: len(dialog.exits) == 3, what="Enter")
    assert dialog.exits == [Exit.KEEP_TRYING] * 3  # Enter is never Quit anyway
    assert dialog.isVisible() and sim_state(sim, "gpu") != "paused"

    dialog = await blocked_quit(app, sim, 3)
    await hf_up(sim)
    dialog.keep_trying.click()
    await finishes_paused(app, sim)
    assert not dialog.isVisible()


async def test_quit_anyway_needs_its_own_confirmation_naming_what_keeps_billing(sim: SimulatedHF,
                                                                               make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    dialog = await blocked_quit(app, sim)
    dialog.quit_anyway.click()
    box = await until(lambda: dialog.confirmation, what="the confirmation")
    assert box.text() == "Quit and leave gpu billing?"
    assert "gpu at $0.50/h keeps billing until you pause it on the simulated Hugging Face" in box.informativeText()
    assert box.defaultButton().text() == "Keep trying" and box.escapeButton().text() == "Keep trying"
    QTest.keyClick(box, Qt.Key.Key_Escape)
    await until(lambda: dialog.exits == [Exit.KEEP_TRYING], what="Escape on the confirmation")
    assert not app.is_closed()

    dialog = await blocked_quit(app, sim, 1)
    dialog.quit_anyway.click()
    box = await until(lambda: dialog.confirmation, what="the confirmation again")
    QTest.keyClick(box, Qt.Key.Key_Return)  # Enter on the confirmation: Keep trying too
    await until(lambda: len(dialog.exits) == 2, what="Enter on the confirmation")
    assert dialog.exits == [Exit.KEEP_TRYING] * 2 and not app.is_closed()

    dialog = await blocked_quit(app, sim, 2)
    dialog.quit_anyway.click()
    box = await until(lambda: dialog.confirmation, what="the confirmation once more")
    next(b for b in box.buttons() if b.text() == "Quit, leave it billing").click()
    await until(lambda: app.is_closed(), timeout=40, what="quit anyway")
    assert dialog.exits[-1] is Exit.QUIT_ANYWAY
    assert sim_state(sim, "gpu") in ("running", "scaledToZero")  # chosen twice, and told


async def test_a_pause_landing_meanwhile_ends_the_block_by_itself(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    dialog = await blocked_quit(app, sim)
    dialog.quit_anyway.click()  # even with Quit anyway's question open
    box = await until(lambda: dialog.confirmation, what="the confirmation")
    await hf_up(sim)  # Pairwise keeps asking: the owed pause goes through
    await finishes_paused(app, sim)
    assert dialog.exits == [Exit.PAUSED_MEANWHILE]
    assert not box.isVisible() and dialog.confirmation is None


async def test_the_app_answers_a_second_quit_and_a_stop_signal_after_the_dialog_was_closed(sim: SimulatedHF,
                                                                                           make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    open_menu(app)
    quit_action = find_action(app.tray.menu, "Quit")
    app.install_signal_handlers()
    dialog = await blocked_quit(app, sim)
    dialog.hide()  # a window manager that hid it: the tray's Quit is still answered
    quit_action.trigger()
    await until(lambda: dialog.isVisible(), what="a second Quit bringing the window back")
    assert dialog.exits == [] and not app.is_closed()
    dialog.close()  # the X, as in the wedge that was reported
    os.kill(os.getpid(), signal.SIGTERM)
    await until(lambda: app.is_closed(), timeout=60, what="SIGTERM answered")
    assert Exit.SIGNAL in dialog.exits or dialog.interrupted
    assert "Still billing after Pairwise quit" in app.sent.titles()  # nobody could answer: it said so


async def test_an_endpoint_deleted_on_hugging_face_does_not_stall_quit(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    await running_gpu(app, sim, name="gone")
    await running_gpu(app, sim, name="rested")
    await app.facade.rented_pause("rested")
    await until(lambda: app.facade.rented_row("rested")["provider_state"] == "paused", what="rested paused")
    await sim.control("DELETE", f"/_sim/endpoints/{sim.demo_namespace}/gone")
    assert "gone" in app.facade.pause_on_exit_targets()  # not polled yet: still taken to bill
    app.request_quit()
    dialog = await until(lambda: app.quit_dialog, what="the quit window")
    await until(lambda: app.is_closed(), timeout=20, what="the quit")
    assert dialog.exits == []  # nothing blocked it
    assert sim_state(sim, "gpu") == "paused"
    assert "Pausing rested…" not in dialog.steps  # already paused: not "Pausing…"
    # Either the pause met HF's 404 and said so, or a poll found it gone first and nothing was asked.
    assert "Pausing gone…" not in dialog.steps or "gone no longer exists on Hugging Face: nothing bills." in dialog.steps
    assert not any("gone" in s and "billing" in s for s in dialog.steps)


async def test_open_on_hugging_face_opens_each_real_endpoints_page(qapp: Any, monkeypatch: Any) -> None:
    from PySide6.QtGui import QDesktopServices

    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    dialog = QuitDialog(["gpu"])
    dialog.blocked([StillBilling("gpu", 0.5, "me/gpu", "Hugging Face did not answer",
                                  provider="huggingface-endpoint")])
    assert not dialog.open_site.isHidden() and dialog.open_site.text() == "Open on Hugging Face"
    dialog.open_site.click()
    assert opened == dialog.opened == ["https://endpoints.huggingface.co/me/gpu"]
    dialog.finish()
