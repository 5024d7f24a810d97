"""Fits every screen: on a 1280×800 screen at QT_SCALE_FACTOR 1, 1.5 and 2 (a 1280×800, 853×533 and
640×400 logical screen) every wizard page, the main window with a rented node's detail, the quit
dialog and the pairing dialog with an error keep their windows on screen, their buttons on screen
and inside the window, and their wrapped text uncut. Colours of our own are readable in a light and
a dark palette.

The scale factor is fixed when the QApplication starts, so each scale runs ``walk_every_window``
in its own pytest process (offscreen, with a configured screen); ``PAIRWISE_FIT_SCALE`` marks it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QApplication, QLabel, QWidget

from app.harness import REPO as REPO_DIR
from app.simulator import SimulatedHF
from app.ui.hf.wizard.state import HfPage
from app.ui.notify import Notification
from app.ui.palette import AMBER_ON_DARK, AMBER_ON_LIGHT, READABLE, contrast, muted, off_lan_colour
from app.ui.views.pairing import JoinDialog
from tests.ui.conftest import REPO, until
from tests.ui.helpers import hf, running_gpu
from tests.ui.test_money_first import hf_down, hf_up
from tests.ui.test_wizard import open_wizard, sign_in

SCREEN = (1280, 800)
SCALES = ("1", "1.5", "2")
IN_CHILD = os.environ.get("PAIRWISE_FIT_SCALE")


def problems(window: QWidget, what: str) -> list[str]:
    """What does not fit in ``window`` as shown now: the window off the screen, a visible button off
    the screen or outside the window, a wrapped label shorter than its text needs."""
    screen = (window.screen() or QApplication.primaryScreen()).availableGeometry()
    found = []
    frame = window.frameGeometry()
    if not screen.contains(frame):
        found.append(f"{what}: window {frame.getRect()} is not within the screen {screen.getRect()}")
    inside = QRect(window.mapToGlobal(window.rect().topLeft()), window.size())
    for button in window.findChildren(QAbstractButton):
        if not button.isVisibleTo(window) or not button.isVisible():
            continue
        rect = QRect(button.mapToGlobal(button.rect().topLeft()), button.size())
        if not (screen.contains(rect) and inside.contains(rect)) and not _scrolls(button):
            found.append(f"{what}: button {button.text()!r} at {rect.getRect()} is off the window or screen")
    for label in window.findChildren(QLabel):
        if label.isVisible() and label.wordWrap() and label.text():
            need = label.heightForWidth(label.width())
            if need > label.height() + 1:
                found.append(f"{what}: label {label.text()[:40]!r} is {label.height()} px high, needs {need}")
    return found


async def settled(window: QWidget, what: str) -> list[str]:
    """``problems`` once the layout has settled (its requests are handled on the loop): what stays wrong
    after a few seconds is a problem."""
    try:
        await until(lambda: not problems(window, what), timeout=3, what=f"{what} to settle")
    except AssertionError:
        pass  # what is still wrong is reported below, with the others
    return problems(window, what)


def sideways(window: QWidget, what: str) -> list[str]:
    """A visible list or table in ``window`` that scrolls sideways (its columns should share the width)."""
    return [f"{what}: {type(area).__name__} {area.objectName()!r} scrolls sideways by {area.horizontalScrollBar().maximum()} px"
            for area in window.findChildren(QAbstractItemView)
            if area.isVisible() and area.horizontalScrollBar().maximum() > 0]


def _scrolls(widget: QWidget) -> bool:
    """Inside a scroll area's content: reached by scrolling, so it may lie outside the window."""
    parent = widget.parentWidget()
    while parent is not None:
        if parent.objectName() in ("scrollingContent",) or parent.metaObject().className() == "QScrollArea":
            return True
        parent = parent.parentWidget()
    return False


@pytest.mark.skipif(not IN_CHILD, reason="run by test_every_window_fits_at_every_scale in its own process")
async def test_walk_every_window(sim: SimulatedHF, make_app: Any) -> None:
    found: list[str] = []
    app = await make_app()
    await until(lambda: app.welcome.engines.looked, what="the welcome's look")  # "No engine found" and what to do
    found += await settled(app.welcome, "welcome")
    app.welcome.close()
    wizard = await open_wizard(app)
    found += await settled(wizard, "wizard intro")
    wizard.next()
    found += await settled(wizard, "wizard sign in")
    await sign_in(wizard, sim.demo_token)
    await until(lambda: hf(wizard).model.loads >= 1, what="the catalog")
    found += await settled(wizard, "wizard model")
    hf(wizard).model.repo.setText(REPO)
    wizard.next()
    await until(lambda: hf(wizard).gpu.loads >= 1, what="the GPU list")
    found += await settled(wizard, "wizard GPU")
    assert hf(wizard).gpu.select("nvidia-t4", "x1", vendor="aws", region="us-east-1")
    wizard.next()
    assert wizard.currentId() == HfPage.SETTINGS
    hf(wizard).settings.day.setValue(5)
    found += await settled(wizard, "wizard settings")
    wizard.next()
    await until(lambda: wizard.currentId() == HfPage.CONFIRM, what="the confirmation")
    found += await settled(wizard, "wizard confirm")
    wizard.close()

    # HF's scale-to-zero must not end the bill before the quit has blocked on it (a simulated minute is 0.2 s)
    await running_gpu(app, sim, usd_per_day=10.0, usd_per_month=300.0, scale_to_zero_min=600)
    app.open_window()
    app.window.show_node("gpu")
    await until(lambda: app.window.detail.own is not None, what="the detail")
    found += await settled(app.window, "node detail")
    app.window.tabs.setCurrentIndex(2)  # Settings, with Models (the rented GPU's copy, its long name)
    await until(lambda: "nvidia" in " ".join(app.window.settings.models_box.texts()) or
                app.window.settings.models_box.models.rowCount() >= 1, what="the models")
    found += sideways(app.window, "settings")
    app.window.tabs.setCurrentIndex(0)

    join = JoinDialog(app.facade, app.tasks)
    join.show()
    join.address.setText("127.0.0.1:9")  # nobody listens: the error is long
    join.pin.setText("123 456")
    join.buttons.accepted.emit()
    await until(lambda: join.buttons.isEnabled() and ":" in join.status.text(), what="the pairing error")
    found += await settled(join, "pairing error")
    join.close()

    app.notices.add(Notification("budget_paused", "gpu paused: over budget", "It is paused on its provider so it "
                                 "stops billing. " * 4, "warning", "gpu"), "denied")
    found += await settled(app.notices, "money notices")
    app.notices.dismiss()

    await hf_down(sim)
    app.request_quit()
    dialog = await until(lambda: app.quit_dialog, what="the quit window")
    await until(lambda: dialog.billing, timeout=40, what="the quit blocked")
    found += await settled(dialog, "quit dialog")
    await hf_up(sim)
    dialog.keep_trying.click()
    await until(lambda: app.is_closed(), timeout=40, what="the quit")
    with open(os.environ["PAIRWISE_FIT_REPORT"], "w") as report:  # noqa: ASYNC230 (one small file, at the end)
        report.write(json.dumps(found))


@pytest.mark.skipif(bool(IN_CHILD), reason="the child runs the walk itself")
@pytest.mark.parametrize("scale", SCALES)
def test_every_window_fits_at_every_scale(scale: str, tmp_path: Path) -> None:
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": SCREEN[0],
                                               "height": SCREEN[1], "logicalDpi": 96, "logicalBaseDpi": 96,
                                               "dpr": 1}]}))
    report = tmp_path / "report.json"
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "QT_SCALE_FACTOR": scale,
           "PAIRWISE_FIT_SCALE": scale, "PAIRWISE_FIT_REPORT": str(report)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          f"{__file__}::test_walk_every_window"], cwd=REPO_DIR, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert json.loads(report.read_text()) == []


def _palette(dark: bool) -> QPalette:
    palette = QPalette()
    window, text = (QColor("#2b2b2b"), QColor("#e6e6e6")) if dark else (QColor("#f0f0f0"), QColor("#1a1a1a"))
    for role, colour in ((QPalette.ColorRole.Window, window), (QPalette.ColorRole.Base, window.darker(110)),
                         (QPalette.ColorRole.WindowText, text), (QPalette.ColorRole.Text, text),
                         (QPalette.ColorRole.Mid, QColor("#3c3c3c") if dark else QColor("#a0a0a0"))):
        palette.setColor(role, colour)
    return palette


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_our_colours_are_readable_in_light_and_dark_themes(qapp: Any, dark: bool) -> None:
    palette = _palette(dark)
    back = palette.color(QPalette.ColorRole.Window)
    base = palette.color(QPalette.ColorRole.Base)
    assert contrast(muted(palette), back) >= READABLE
    assert contrast(off_lan_colour(palette), base) >= READABLE
    assert muted(palette) != palette.color(QPalette.ColorRole.WindowText)  # still softer than the text
    # What the wizard used before: palette(mid), unreadable on the dark theme.
    if dark:
        assert contrast(palette.color(QPalette.ColorRole.Mid), back) < 2
    assert contrast(AMBER_ON_LIGHT, QColor("white")) >= READABLE and contrast(AMBER_ON_DARK, QColor("#1e1e1e")) >= READABLE
