"""Pairing dialogs: "Invite a machine" shows a six-digit PIN and waits for the other node;
"Join a cluster" asks for the inviter's address and its PIN."""

from __future__ import annotations

import time

from PySide6.QtCore import QRegularExpression, QTimer
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.services.api import glossary
from app.services.api.snapshots import PinRow
from app.services.errors import PairwiseError
from app.ui.aio import Tasks, error_text
from app.ui.facade import NodeFacade
from app.ui.notify import tries_left_text
from app.ui.palette import off_lan_colour
from app.ui.sizing import grow_to_fit, screen_width


class InviteDialog(QDialog):
    """Shows the PIN until a node joins (then says who), it expires, or the user cancels."""

    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks = facade, tasks
        self.setWindowTitle("Invite a machine")
        self.setMinimumWidth(min(self.fontMetrics().averageCharWidth() * 60, screen_width(self)))
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("On the other machine, open Pairwise → Settings → Join a cluster, and type:"))
        self.pin = QLabel("······")
        self.pin.setObjectName("pin")
        self.pin.setStyleSheet("font-size: 32px; font-family: monospace; letter-spacing: 6px")
        self.address = QLabel("")
        self.status = QLabel("Opening the pairing port…")
        self.status.setWordWrap(True)
        self.wrong = QLabel("")  # wrong PINs tried against this invite: someone may be guessing
        self.wrong.setObjectName("wrongPins")
        self.wrong.setWordWrap(True)
        self.wrong.setStyleSheet(f"color: {off_lan_colour(self.palette()).name()}")  # the palette's warning amber
        self.wrong.hide()
        for widget in (self.pin, self.address, self.status, self.wrong):
            layout.addWidget(widget)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.expires_at = 0.0
        self.result_peer: PinRow | None = None
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._countdown)
        self.rejected.connect(self._cancel)
        self._task = tasks.spawn(self._run(), name="pairing invite", on_error=self._failed)

    async def _run(self) -> None:
        made = await self.facade.pair_invite()
        self.pin.setText(f"{made['pin'][:3]} {made['pin'][3:]}")
        self.address.setText(f"Address: {made['address']}")
        self.expires_at = float(made["expires_at_unix"])
        self._countdown()
        self._tick.start()
        peer = await self.facade.pair_wait(None)
        self._tick.stop()
        self.result_peer = peer
        self.status.setText(f"Paired with {peer['name']}. Its models are now part of your cluster.")
        self.buttons.setStandardButtons(QDialogButtonBox.StandardButton.Close)

    def _countdown(self) -> None:
        left = max(0, int(self.expires_at - time.time()))
        self.status.setText(f"Waiting for the other machine… the PIN is good for {left // 60}:{left % 60:02d}.")
        self._show_wrong()

    def _show_wrong(self) -> None:
        """Each wrong PIN tried against this invite, from where and the tries left (the state, read now)."""
        try:
            state = self.facade.pair_invite_status()
        except PairwiseError:  # no pairing here at all: the failure itself is already shown
            return
        tried, sources = int(state.get("wrong_tries") or 0), ", ".join(state.get("wrong_from") or [])
        if state.get("state") == "void" or state.get("tries_left") == 0:  # the void, or its record a moment later
            self.wrong.setText(f"Invite voided: too many wrong PINs from {sources or 'an unknown address'}. "
                               "Close this and invite again to pair.")
        elif tried:
            self.wrong.setText(f"{glossary.plural(tried, 'wrong PIN')} tried from {sources}. "
                               f"{tries_left_text(int(state.get('tries_left') or 0))} If that was not your other "
                               "machine, cancel.")
        else:
            self.wrong.setText("")
        self.wrong.setVisible(bool(self.wrong.text()))

    def _failed(self, title: str, message: str) -> None:
        self._tick.stop()
        self.status.setText(f"{title}: {message}")
        self._show_wrong()
        grow_to_fit(self)  # a taken port's whole explanation, not only when maximised

    def _cancel(self) -> None:
        self._tick.stop()
        if self.result_peer is None and not self._task.done():
            self._task.cancel()
            self.tasks.spawn(self.facade.pair_cancel(), name="cancel invite")


class JoinDialog(QDialog):
    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks = facade, tasks
        self.setWindowTitle("Join a cluster")
        self.setMinimumWidth(min(self.fontMetrics().averageCharWidth() * 60, screen_width(self)))
        form = QFormLayout(self)
        self.address = QLineEdit()
        self.address.setPlaceholderText("192.168.1.20:14331")
        self.pin = QLineEdit()
        self.pin.setObjectName("joinPin")
        self.pin.setPlaceholderText("six digits")
        self.pin.setValidator(QRegularExpressionValidator(QRegularExpression(r"\d{0,3} ?\d{0,3}"), self.pin))
        self.status = QLabel("The inviting machine shows its address and PIN.")
        self.status.setWordWrap(True)
        form.addRow("Address", self.address)
        form.addRow("PIN", self.pin)
        form.addRow(self.status)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Join")
        self.buttons.accepted.connect(self._join)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.result_peer: PinRow | None = None

    def _join(self) -> None:
        address, pin = self.address.text().strip(), self.pin.text().replace(" ", "")
        if not address or len(pin) != 6:
            self.status.setText("Give the inviter's address and its six-digit PIN.")
            return
        self.buttons.setEnabled(False)
        self.status.setText(f"Pairing with {address}…")

        async def run() -> None:
            try:
                self.result_peer = await self.facade.pair_join(address, pin)
            except PairwiseError as exc:
                title, message = error_text(exc)
                self.status.setText(f"{title}: {message}")
                grow_to_fit(self)
                self.buttons.setEnabled(True)
                return
            self.status.setText(f"Paired with {self.result_peer['name']}.")
            self.accept()

        self.tasks.spawn(run(), name="pairing join")
