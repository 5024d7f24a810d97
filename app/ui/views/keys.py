"""Settings' Keys section: the LAN door switch and its certificate fingerprint, the node's keys with
their limits, making a key (shown once, with a copy button) and revoking one."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.services.api.changes import NewKey
from app.services.api.snapshots import KeyListRow
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade

DEFAULT_LAN_LISTEN = "0.0.0.0:11435"


def key_line(row: KeyListRow) -> str:
    limits = []
    if row.get("models"):
        limits.append("models " + ", ".join(row["models"]))
    if row.get("off_lan") == "deny":
        limits.append("no off-LAN")
    if row.get("usd_per_day") is not None:
        limits.append(f"${row['usd_per_day']:g}/day")
    if row.get("requests_per_min"):
        limits.append(f"{row['requests_per_min']}/min")
    spent = f" · today ${row['usd_today']:.2f}" if row.get("usd_today") else ""
    state = "" if row.get("state") == "active" else " — revoked"
    return f"{row['name']}{state} · {'; '.join(limits) or 'no limits'}{spent}"


class KeysBox(QGroupBox):
    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__("Keys and LAN access", parent)
        self.facade, self.tasks = facade, tasks
        layout = QVBoxLayout(self)

        lan = QHBoxLayout()
        self.lan_switch = QCheckBox("LAN access (HTTPS, a key required)")
        self.lan_switch.setObjectName("lanSwitch")
        self.lan_address = QLineEdit(DEFAULT_LAN_LISTEN)
        self.lan_address.setObjectName("lanAddress")
        self.lan_switch.toggled.connect(self._lan_toggled)
        lan.addWidget(self.lan_switch)
        lan.addWidget(self.lan_address)
        layout.addLayout(lan)
        self.lan_status = QLabel("")
        self.lan_status.setObjectName("lanStatus")
        self.lan_status.setWordWrap(True)
        layout.addWidget(self.lan_status)

        self.keys = QListWidget()
        self.keys.setObjectName("keys")
        self.keys.setMaximumHeight(110)
        layout.addWidget(self.keys)

        form = QFormLayout()
        self.key_name = QLineEdit()
        self.key_name.setObjectName("keyName")
        self.key_name.setPlaceholderText("phone, ci-bot…")
        self.key_models = QLineEdit()
        self.key_models.setPlaceholderText("any model (or patterns: llama3* qwen*)")
        self.key_off_lan = QComboBox()
        self.key_off_lan.addItems(["allow", "deny"])
        self.key_usd = QDoubleSpinBox()
        self.key_usd.setRange(0, 100_000)
        self.key_usd.setSuffix(" $/day")
        self.key_usd.setSpecialValueText("no cap")
        self.key_rate = QSpinBox()
        self.key_rate.setRange(0, 100_000)
        self.key_rate.setSuffix(" /min")
        self.key_rate.setSpecialValueText("no limit")
        form.addRow("Name", self.key_name)
        form.addRow("Models", self.key_models)
        form.addRow("Off-LAN (rented GPUs)", self.key_off_lan)
        form.addRow("Spend on rented GPUs", self.key_usd)
        form.addRow("Requests to rented GPUs", self.key_rate)
        layout.addLayout(form)
        buttons = QHBoxLayout()
        self.create_button = QPushButton("Create key")
        self.create_button.setObjectName("createKey")
        self.revoke_button = QPushButton("Revoke selected")
        self.create_button.clicked.connect(self.create_key)
        self.revoke_button.clicked.connect(self.revoke)
        buttons.addWidget(self.create_button)
        buttons.addWidget(self.revoke_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)

        shown = QHBoxLayout()
        self.new_key = QLineEdit()
        self.new_key.setObjectName("newKey")
        self.new_key.setReadOnly(True)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName("copyKey")
        self.copy_button.clicked.connect(self.copy)
        shown.addWidget(self.new_key)
        shown.addWidget(self.copy_button)
        layout.addLayout(shown)
        self.note = QLabel("")
        self.note.setObjectName("keysNote")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self._show_new_key(None)

    def _show_new_key(self, key: str | None) -> None:
        self.new_key.setText(key or "")
        for widget in (self.new_key, self.copy_button):
            widget.setVisible(key is not None)

    def refresh(self) -> None:
        status = self.facade.lan_status()
        self.setEnabled(status is not None)
        if status is None:
            self.lan_status.setText("Keys and LAN access are not part of this build.")
            return
        self.lan_switch.blockSignals(True)
        self.lan_switch.setChecked(bool(status["on"]))
        self.lan_switch.blockSignals(False)
        if status.get("listen"):
            self.lan_address.setText(status["listen"])
        self.lan_address.setEnabled(not status["on"])
        if status["on"]:
            self.lan_status.setText(f"On at {status['url']}. Clients pin this node's LAN door CA "
                                    f"('pairwise lan cert'), SHA-256 {status['fingerprint']}.")
        else:
            self.lan_status.setText(f"Off: {status['error']}" if status.get("error")
                                    else "Off: only apps on this machine can use Pairwise.")
        self.keys.clear()
        for row in self.facade.keys():
            self.keys.addItem(key_line(row))

    def _lan_toggled(self, on: bool) -> None:
        async def run() -> None:
            await self.facade.set_lan(self.lan_address.text().strip() if on else None)
            self.note.setText("LAN access on." if on else "LAN access off.")
            self.refresh()

        def failed(title: str, message: str) -> None:
            self.note.setText(f"{title}: {message}")
            self.refresh()

        self.tasks.spawn(run(), name="LAN access", on_error=failed)

    def create_key(self) -> None:
        name = self.key_name.text().strip()
        models = self.key_models.text().replace(",", " ").split()
        new = NewKey(name=name, models=models, off_lan="deny" if self.key_off_lan.currentText() == "deny" else "allow", usd_per_day=self.key_usd.value() or None,
                     requests_per_min=self.key_rate.value() or None)

        async def run() -> None:
            created = await self.facade.key_create(new)
            self._show_new_key(created["key"])
            self.note.setText(f"Key {name} made. Copy it now: it is shown this once (only its hash is kept).")
            self.key_name.clear()
            self.refresh()

        self.tasks.spawn(run(), name="create key", on_error=lambda t, m: self.note.setText(f"{t}: {m}"))

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.new_key.text())
        self.note.setText("Copied. It will not be shown again.")

    def revoke(self) -> None:
        item = self.keys.currentItem()
        if item is None:
            return
        name = item.text().split(" ", 1)[0]

        async def run() -> None:
            await self.facade.key_revoke(name)
            self._show_new_key(None)
            self.note.setText(f"Key {name} revoked: refused from now on.")
            self.refresh()

        self.tasks.spawn(run(), name="revoke key", on_error=lambda t, m: self.note.setText(f"{t}: {m}"))
