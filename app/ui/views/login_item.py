"""Settings' "Start at login" switch: writes or removes this OS's login item (the platform layer's
``Autostart``); nothing is written until the user turns it on."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from app.services.platform.autostart import Autostart, tray_command
from app.services.platform.paths import default_home


def autostart_for(home: Path) -> Autostart:
    """The login item for this installation and home (``--home`` only when it is not the default)."""
    return Autostart(tray_command(None if home == default_home() else home))


class LoginItemBox(QGroupBox):
    def __init__(self, autostart: Autostart, parent: QWidget | None = None) -> None:
        super().__init__("This computer", parent)
        self.autostart = autostart
        layout = QVBoxLayout(self)
        self.check = QCheckBox("Start Pairwise when I log in")
        self.check.setObjectName("startAtLogin")
        self.note = QLabel("")
        self.note.setWordWrap(True)
        layout.addWidget(self.check)
        layout.addWidget(self.note)
        self.refresh()
        self.check.toggled.connect(self._toggled)

    def refresh(self) -> None:
        self.check.blockSignals(True)
        self.check.setChecked(self.autostart.enabled())
        self.check.blockSignals(False)
        self.note.setText(f"Login item: {self.autostart.where()}")

    def _toggled(self, on: bool) -> None:
        try:
            self.autostart.enable() if on else self.autostart.disable()
        except OSError as exc:
            self.note.setText(f"Could not {'add' if on else 'remove'} the login item at {self.autostart.where()}: "
                              f"{exc.strerror or exc}")
            self.check.blockSignals(True)
            self.check.setChecked(self.autostart.enabled())
            self.check.blockSignals(False)
            return
        self.note.setText(f"Login item {'added' if on else 'removed'}: {self.autostart.where()}")
