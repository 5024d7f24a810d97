"""The welcome window: on first start (or while another program holds the front door), what runs
and the address apps use, then a newcomer's steps: moving Ollama when it holds 127.0.0.1:11434, the
engines found on this machine, pairing a machine, renting a GPU and trying the demo
(``welcome_steps``). It shows once; the tray menu's Getting started… opens it again.

Pairwise changes no system service: the steps are shown for the user to run. Meanwhile the node
runs without its front door, and a timer asks the OS whether the address is free (a local bind,
no network); the moment it is, the front door opens (no restart) and Ollama is adopted where it
went. Engines are looked for once when the window opens and again only when asked.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.services.api import FoundEngine, glossary
from app.services.errors import PortTaken
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.resources import app_icon
from app.ui.sizing import fit_to_screen
from app.ui.welcome_steps import DemoStep, PairStep, RentStep, step_text

log = logging.getLogger(__name__)

FRONTDOOR_CHECK_MS = 1500


NO_ENGINE = (
    "<b>No engine found on this machine</b>, and none is adopted yet, so this machine serves no model. "
    "What to do:<ul>"
    "<li>Start an engine (Ollama, LM Studio, llama.cpp, vLLM, Jan…), then press <b>Look again</b>. If Ollama "
    "runs on this machine's usual address, Pairwise shows how to move it to the next port.</li>"
    "<li>An engine elsewhere or on another port: <b>Add an engine…</b> by its URL.</li>"
    "<li>No engine at all: pair a machine that has one, rent a GPU, or try the demo (below).</li></ul>")


def found_text(found: int, adopted: Sequence[Mapping[str, Any]]) -> str:
    """What one look found, in the words of what this machine already serves: "no engine found" only when
    there is truly none, found or adopted."""
    if found:
        return (f"Found {glossary.plural(found, 'engine')} not adopted yet: adopt them to serve their models "
                "through Pairwise.")
    if not adopted:
        return NO_ENGINE
    serving = ", ".join(f"{e['name']} ({glossary.plural(len(e.get('models') or []), 'model')})" for e in adopted)
    return (f"Pairwise already serves this machine's models through {serving}. No other engine found; start "
            "one and look again, or add one by URL.")


class FoundEnginesPanel(QWidget):
    """What one look found, each engine checkable with its models; Look again, Adopt selected."""

    adopted = Signal()
    add_requested = Signal()

    def __init__(self, facade: NodeFacade, tasks: Tasks, ports: list[int] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks, self.ports = facade, tasks, ports
        self.found: list[FoundEngine] = []
        self.looked = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("foundEngines")
        self.note = QLabel("Looking for engines on this machine…")
        self.note.setObjectName("foundNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.RichText)
        buttons = QHBoxLayout()
        self.look_button = QPushButton("Look again")
        self.adopt_button = QPushButton("Adopt selected")
        self.adopt_button.setObjectName("adoptEngines")
        self.adopt_button.setEnabled(False)
        self.add_button = QPushButton("Add an engine…")  # one by URL: Settings' Engines, opened by the app
        self.add_button.setObjectName("addEngineByUrl")
        self.add_button.clicked.connect(self.add_requested.emit)
        self.look_button.clicked.connect(self.look)
        self.adopt_button.clicked.connect(self.adopt_selected)
        buttons.addWidget(self.look_button)
        buttons.addWidget(self.add_button)
        buttons.addStretch(1)
        buttons.addWidget(self.adopt_button)
        layout.addWidget(self.note)
        layout.addWidget(self.list)
        layout.addLayout(buttons)

    def look(self) -> None:
        self.look_button.setEnabled(False)
        self.note.setText("Looking for engines on this machine…")
        self.tasks.spawn(self._look(), name="discover engines", on_error=self._failed)

    async def _look(self) -> None:
        try:
            self.found = await self.facade.discover_engines(self.ports)
        finally:
            self.look_button.setEnabled(True)
        self.looked = True
        self.list.clear()
        for engine in self.found:
            models = ", ".join(engine.models) or "no models yet"
            item = QListWidgetItem(f"{engine.product} — {engine.url} ({engine.api} API): {models}")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.list.addItem(item)
        self.adopt_button.setEnabled(bool(self.found))
        self.note.setText(found_text(len(self.found), self.facade.engines()))

    def selected(self) -> list[FoundEngine]:
        return [engine for row, engine in enumerate(self.found)
                if self.list.item(row).checkState() == Qt.CheckState.Checked]

    def adopt_selected(self) -> None:
        chosen = self.selected()
        if not chosen:
            return
        self.adopt_button.setEnabled(False)
        self.tasks.spawn(self._adopt(chosen), name="adopt engines", on_error=self._failed)

    async def _adopt(self, chosen: list[FoundEngine]) -> None:
        added = await self.facade.adopt_engines(chosen)
        names = ", ".join(f"{a['name']} ({glossary.plural(len(a.get('models') or []), 'model')})" for a in added)
        await self._look()
        self.note.setText(f"Adopted {names}." if added else "Nothing new to adopt.")
        self.adopted.emit()

    def _failed(self, title: str, message: str) -> None:
        self.look_button.setEnabled(True)
        self.note.setText(f"{title}: {message}")


class WelcomeWindow(QWidget):
    """First start: what runs and its address, then the steps: the front door (when Ollama holds
    it), add an engine, pair a machine, rent a GPU, try the demo."""

    frontdoor_opened = Signal()
    rent_requested = Signal()
    add_engine_requested = Signal()

    def __init__(self, facade: NodeFacade, tasks: Tasks, problem: PortTaken | None = None, *,
                 ports: list[int] | None = None, check_ms: int = FRONTDOOR_CHECK_MS) -> None:
        super().__init__()
        self.facade, self.tasks, self.problem = facade, tasks, problem
        self.setWindowTitle("Welcome to Pairwise")
        self.setWindowIcon(app_icon())
        layout = QVBoxLayout(self)
        self.intro = QLabel(self._intro_text())
        self.intro.setObjectName("welcomeIntro")
        self.intro.setWordWrap(True)
        self.intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.intro)

        steps = QWidget()
        steps_layout = QVBoxLayout(steps)
        steps_layout.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()  # at a large font or scale factor the steps scroll instead of being cut
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(steps)
        layout.addWidget(scroll, 1)

        self.door_box = QGroupBox(self._door_title())
        self.door_box.setObjectName("frontDoorStep")
        door = QVBoxLayout(self.door_box)
        self.door_text = QLabel(self._door_text())
        self.door_text.setObjectName("frontDoorText")
        self.door_text.setWordWrap(True)
        self.door_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.door_status = QLabel("")
        self.door_status.setObjectName("frontDoorStatus")
        self.door_status.setWordWrap(True)
        door.addWidget(self.door_text)
        door.addWidget(self.door_status)
        self.door_box.setVisible(problem is not None)
        steps_layout.addWidget(self.door_box)

        first = 2 if problem is not None else 1  # moving Ollama, when it holds the address, is step one
        engines = QGroupBox(f"Step {first}: add an engine")
        engines.setObjectName("engineStep")
        e = QVBoxLayout(engines)
        e.addWidget(step_text("An engine runs the models (Ollama, LM Studio, llama.cpp, vLLM, Jan…). Pairwise "
                              "looked on this machine; adopt what it found, or add one by URL in Settings."))
        self.engines = FoundEnginesPanel(facade, tasks, ports)
        self.engines.add_requested.connect(self.add_engine_requested.emit)
        self.engines.list.setMaximumHeight(self.fontMetrics().lineSpacing() * 6)
        e.addWidget(self.engines)
        steps_layout.addWidget(engines)
        self.pair = PairStep(facade, tasks, f"Step {first + 1}: pair a machine")
        self.rent = RentStep(facade, f"Step {first + 2}: rent a GPU")
        self.rent.rent_requested.connect(self.rent_requested.emit)
        in_demo = facade.is_demo()
        self.demo = DemoStep(self._address(), f"Step {first + 3}: " + ("this is the demo" if in_demo else
                                                                      "try the demo"), in_demo=in_demo)
        for step in (self.pair, self.rent, self.demo):
            steps_layout.addWidget(step)
        steps_layout.addStretch(1)

        bottom = QHBoxLayout()
        reopen = QLabel("This window shows once. Open it again from the tray menu: Getting started…")
        reopen.setWordWrap(True)
        bottom.addWidget(reopen, 1)
        self.done_button = QPushButton("Done")
        self.done_button.clicked.connect(self.close)
        bottom.addWidget(self.done_button)
        layout.addLayout(bottom)
        fit_to_screen(self, width_chars=128, height_lines=52)

        self._check = QTimer(self)
        self._check.setInterval(check_ms)
        self._check.timeout.connect(self._check_frontdoor)
        self._opening = False
        if problem is not None:
            self.door_status.setText(f"Waiting for {problem.address} to be free… Pairwise starts there on its own "
                                     "the moment it is.")
            self._check.start()

    def _address(self) -> str:
        """Where apps reach this node: where it answers, or (front door not open yet) where it will."""
        return self.facade.front_door_address() or self.facade.front_door_listen()

    def _intro_text(self) -> str:
        address = self._address()
        waiting = (" as soon as step 1 is done" if self.problem is not None and not self.facade.frontdoor_open()
                   else "")
        return ("<p><b>Pairwise is running on this machine</b>, in the tray. Every app here reaches all your "
                "models — this machine's engines, your other machines' and any GPU you rent — at one "
                f"address{waiting}:</p>"
                f"<p style='margin-left:16px'><b>http://{address}</b> for apps that speak Ollama<br>"
                f"<b>http://{address}/v1</b> for apps that speak OpenAI</p>"
                "<p>Only apps on this machine can use it. Nothing is rented or billed until you rent a GPU "
                "yourself. Closing this window keeps Pairwise running; Quit in the tray menu stops it.</p>")

    def _door_title(self) -> str:
        if self.problem is not None and self.problem.holder_kind == "ollama":
            return f"Step 1: move Ollama to {self.problem.moved_to}"
        return "Step 1: free the front door"

    def _door_text(self) -> str:
        problem = self.problem
        if problem is None:
            return ""
        if problem.holder_kind != "ollama":
            return problem.message
        steps = "".join(f"<li>{step}</li>" for step in problem.steps)
        return (f"Ollama listens on {problem.address}, the address your apps use. Move it to the next port, and "
                f"Pairwise serves your Ollama models there as one of its engines:<ol>{steps}</ol>"
                "Pairwise changes none of this itself. Once Ollama has moved, Pairwise opens "
                f"{problem.address} and adopts Ollama at {problem.moved_to}.")

    def start(self) -> None:
        self.show()
        self.raise_()
        self.engines.look()

    def stay_above(self, window: QWidget) -> None:
        """Keep this window above ``window`` (the main window, opened while this one is up): a transient of
        it for the window manager, and raised now, so the newcomer's steps are never hidden behind it."""
        if not self.isVisible():
            return
        mine, theirs = self.windowHandle(), window.windowHandle()
        if mine is not None and theirs is not None and mine.transientParent() is not theirs:
            mine.setTransientParent(theirs)
        self.raise_()
        self.activateWindow()

    def _check_frontdoor(self) -> None:
        """A Qt timer: a local bind check (no network), then the front door opens where it was refused."""
        if self._opening or self.facade.frontdoor_open():
            return
        if not self.facade.frontdoor_free():
            return
        self._opening = True
        self.tasks.spawn(self._open(), name="open the front door", on_error=self._open_failed)

    async def _open(self) -> None:
        try:
            await self.facade.open_frontdoor()
        except PortTaken:
            self._opening = False  # taken again in between: keep waiting
            return
        self._check.stop()
        self._opening = False
        self.door_box.setTitle("Step 1: done")
        self.door_status.setText(f"Pairwise now serves on {self.facade.front_door_address()}.")
        self.intro.setText(self._intro_text())
        self.demo.set_front_door(self._address())
        self.frontdoor_opened.emit()
        self.engines.look()

    def _open_failed(self, title: str, message: str) -> None:
        self._opening = False
        self.door_status.setText(f"{title}: {message}")

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        if self.problem is None or self.facade.frontdoor_open():
            self.facade.mark_welcomed()
        # While the front door is still taken the window comes back on the next start, and the
        # timer keeps watching: the node opens it as soon as it is free even with the window closed.
        super().closeEvent(event)

    def shutdown(self) -> None:
        self._check.stop()
        self.close()


class DiscoverDialog(QDialog):
    """Settings' Discover button: the same look and adopt, in a dialog."""

    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None,
                 ports: list[int] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Engines on this machine")
        fit_to_screen(self, width_chars=90, height_lines=20)
        layout = QVBoxLayout(self)
        self.panel = FoundEnginesPanel(facade, tasks, ports)
        self.panel.add_button.hide()  # Settings' own Add row is right behind this dialog
        layout.addWidget(self.panel)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        layout.addWidget(close, alignment=Qt.AlignmentFlag.AlignRight)
