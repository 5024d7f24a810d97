"""The welcome window's steps after the engines: pair a machine, rent a GPU, try the demo. Each is a
short section with one action that does what the tray already does: the PIN invite, the Add rented
GPU wizard, and ``pairwise demo`` (a separate app with its own home, so its command is shown to copy:
this tray runs a real node and cannot turn into the demo in-process)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.settings import DEFAULT_LISTEN
from app.ui import providers
from app.ui.aio import Tasks
from app.ui.dialogs import ask
from app.ui.facade import NodeFacade
from app.ui.views.pairing import InviteDialog

# The demo runs beside this node: its own front door next to this one's (the port after it is where
# a moved Ollama goes), so it takes nothing from the apps that use this machine's address.
DEMO_PORT_AFTER_FRONT_DOOR = 2
COPIED_MS = 2000
def in_demo_text() -> str:
    return (f"<b>This is the demo.</b> Its {providers.rent_names()} is simulated: no account, nothing is billed, "
            "and the GPUs you rent here are not real. It keeps its own settings, apart from your own Pairwise. To "
            "leave it, choose Quit in the tray menu (or press Ctrl-C in the terminal that started it); a simulated "
            "GPU still running is paused first, as a real one would be.")


def pairwise_command() -> str:
    """How a terminal on this machine starts this installation's ``pairwise``: the bare name when
    it is on PATH and is this one, else its full path (a virtualenv that is not activated)."""
    script = Path(sys.executable).parent / ("pairwise.exe" if sys.platform == "win32" else "pairwise")
    on_path = shutil.which("pairwise")
    if script.exists():
        if on_path and Path(on_path).resolve() == script.resolve():
            return "pairwise"
        return quoted(str(script))
    return "pairwise" if on_path else f"{quoted(sys.executable)} -m app"


def quoted(text: str) -> str:
    return f'"{text}"' if " " in text else text


def demo_command(front_door: str) -> str:
    """``pairwise demo`` on loopback beside this node's front door (HOST:PORT)."""
    port = front_door.rpartition(":")[2]
    base = int(port) if port.isdigit() and int(port) else int(DEFAULT_LISTEN.rpartition(":")[2])
    return f"{pairwise_command()} demo --listen 127.0.0.1:{base + DEMO_PORT_AFTER_FRONT_DOOR}"


def step_text(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ActionStep(QGroupBox):
    """A step: a few words and one button, disabled (and saying so) when this build lacks the feature."""

    def __init__(self, title: str, name: str, text: str, action: str, *, available: bool, missing: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.setObjectName(name)
        layout = QVBoxLayout(self)
        self.text = step_text(text if available else missing)
        self.button = QPushButton(action)
        self.button.setEnabled(available)
        row = QHBoxLayout()
        row.addWidget(self.button)
        row.addStretch(1)
        layout.addWidget(self.text)
        layout.addLayout(row)


class PairStep(ActionStep):
    """Pair a machine: the Settings tab's PIN invite, opened from here."""

    paired = Signal()

    def __init__(self, facade: NodeFacade, tasks: Tasks, title: str, parent: QWidget | None = None) -> None:
        super().__init__(
            title, "pairStep",
            "Run Pairwise on your other computers and pair each one once: their models answer at this address "
            "too, and this machine's at theirs. This machine shows a six-digit PIN; on the other one, type it in "
            "Settings → Join a cluster. Pairing stays on your network.",
            "Pair a machine…", available=facade.cluster_available(),
            missing="Pairing machines is not part of this build.", parent=parent)
        self.facade, self.tasks = facade, tasks
        self.dialog: InviteDialog | None = None
        self.button.clicked.connect(self.pair)

    def pair(self) -> None:
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            return
        self.dialog = InviteDialog(self.facade, self.tasks, self.window())
        self.tasks.spawn(self._after(self.dialog), name="invite dialog")

    async def _after(self, dialog: InviteDialog) -> None:
        await ask(dialog)
        if dialog.result_peer is not None:
            self.paired.emit()


class RentStep(ActionStep):
    """Rent a GPU: the tray's Add rented GPU wizard (the app owns it: one wizard at a time)."""

    rent_requested = Signal()

    def __init__(self, facade: NodeFacade, title: str, parent: QWidget | None = None) -> None:
        where = providers.rent_names()
        super().__init__(
            title, "rentStep",
            f"When no machine of yours can run a model, rent a GPU from {where}: it joins as a member "
            "(Rented · off-LAN), pauses when idle and stops at the budget you set. The wizard shows the price "
            f"before anything is billed; you need a {where} account.",
            "Rent a GPU…", available=any(p.rent.available(facade) for p in providers.renting() if p.rent is not None),
            missing="Renting GPUs is not part of this build.", parent=parent)
        self.button.clicked.connect(self.rent_requested.emit)


class DemoStep(QGroupBox):
    """Try the demo: ``pairwise demo`` in a terminal, the command ready to copy. Inside the demo itself
    the step says so instead, and how to leave it (there is no demo to start beside the demo)."""

    def __init__(self, front_door: str, title: str, parent: QWidget | None = None, *,
                 in_demo: bool = False) -> None:
        super().__init__(title, parent)
        self.setObjectName("demoStep")
        self.in_demo = in_demo
        layout = QVBoxLayout(self)
        self.text = step_text(in_demo_text() if in_demo else
            f"The demo uses a simulated {providers.rent_names()}: no account, nothing is billed. It opens its own "
            "Pairwise beside this one, with its own settings. Run in a terminal:")
        self.command = QLineEdit(demo_command(front_door))
        self.command.setObjectName("demoCommand")
        self.command.setReadOnly(True)
        self.command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.command.setCursorPosition(0)
        self.button = QPushButton("Copy")
        self.button.setObjectName("copyDemoCommand")
        self.button.clicked.connect(self.copy)
        row = QHBoxLayout()
        row.addWidget(self.command, 1)
        row.addWidget(self.button)
        layout.addWidget(self.text)
        layout.addLayout(row)
        self.command.setVisible(not in_demo)
        self.button.setVisible(not in_demo)
        self._reset = QTimer(self)
        self._reset.setSingleShot(True)
        self._reset.setInterval(COPIED_MS)
        self._reset.timeout.connect(lambda: self.button.setText("Copy"))

    def set_front_door(self, front_door: str) -> None:
        self.command.setText(demo_command(front_door))
        self.command.setCursorPosition(0)

    def copy(self) -> None:
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(self.command.text())
        self.button.setText("Copied")
        self._reset.start()
