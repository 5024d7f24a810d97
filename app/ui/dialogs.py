"""Dialogs that never block the event loop: shown with ``open()`` (window-modal, no nested
``exec()``), answered through a future the caller awaits. A nested ``exec()`` would run asyncio
callbacks re-entrantly inside a task; this keeps one loop and one stack."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QDialog, QMessageBox, QPushButton, QWidget

# The dialog currently waiting for an answer (tests and the screenshot tool find it here).
ACTIVE: list[QDialog] = []


async def ask(dialog: QDialog) -> int:
    """Open ``dialog`` and wait for its result code (QDialog.Accepted / Rejected, or a button)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()

    def finished(code: int) -> None:
        if not done.done():
            done.set_result(code)

    dialog.finished.connect(finished)
    ACTIVE.append(dialog)
    dialog.open()
    try:
        return await done
    finally:
        if dialog in ACTIVE:
            ACTIVE.remove(dialog)


def confirm_box(parent: QWidget | None, title: str, text: str, *, action: str = "OK", informative: str = "",
                destructive: bool = False, cancel: str | None = None) -> tuple[QMessageBox, QPushButton]:
    """A question whose safe answer is the default and what Escape and the close button mean; the
    action must be clicked (or reached with Tab) on purpose."""
    box = QMessageBox(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question, title, text,
                      QMessageBox.StandardButton.NoButton, parent)
    if informative:
        box.setInformativeText(informative)
    yes = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole if destructive
                        else QMessageBox.ButtonRole.AcceptRole)
    yes.setAutoDefault(False)  # focus landing on it never makes it what Enter presses
    no = box.addButton(cancel, QMessageBox.ButtonRole.RejectRole) if cancel is not None \
        else box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(no)
    box.setEscapeButton(no)
    return box, yes


async def confirm(parent: QWidget | None, title: str, text: str, *, action: str = "OK",
                  informative: str = "", destructive: bool = False, cancel: str | None = None) -> bool:
    box, yes = confirm_box(parent, title, text, action=action, informative=informative, destructive=destructive,
                           cancel=cancel)
    await ask(box)
    return box.clickedButton() is yes


def show_error(parent: QWidget | None, title: str, message: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, parent)
    box.open()
    return box
