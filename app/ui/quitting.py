"""Quit: the node's own stop (pause-on-exit first, while the network is up), with a small
window that says what is being paused while it happens."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QProgressBar, QVBoxLayout, QWidget

from app.ui.facade import NodeFacade
from app.ui.resources import app_icon


class QuitDialog(QDialog):
    def __init__(self, targets: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Quitting Pairwise")
        self.setWindowIcon(app_icon())
        self.setWindowFlag(Qt.WindowType.WindowCloseButtonHint, False)
        layout = QVBoxLayout(self)
        if targets:
            intro = f"Pausing {', '.join(targets)} so {'they stop' if len(targets) > 1 else 'it stops'} billing…"
        else:
            intro = "Stopping the node…"
        self.intro = QLabel(intro)
        self.intro.setWordWrap(True)
        self.step = QLabel("")
        self.step.setObjectName("quitStep")
        self.step.setWordWrap(True)
        bar = QProgressBar()
        bar.setRange(0, 0)  # busy: HF answers when it answers (bounded by the node's stop timeout)
        layout.addWidget(self.intro)
        layout.addWidget(self.step)
        layout.addWidget(bar)
        self.steps: list[str] = []
        self.resize(420, 120)

    def say(self, text: str) -> None:
        self.steps.append(text)
        self.step.setText(text)


async def quit_node(facade: NodeFacade, dialog: QuitDialog) -> None:
    unwatch = facade.watch_pause_on_exit(lambda name: dialog.say(f"Pausing {name}…"))
    try:
        await facade.stop(progress=lambda label: dialog.say(label))
    finally:
        unwatch()
    dialog.say("Stopped.")
