"""Settings: pairing and peers, engines, models and their names, the off-LAN policy, peers' rented
GPUs, keys and LAN access, each provider's account."""

from __future__ import annotations

import functools
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.services.api.changes import SettingsChange
from app.ui import providers
from app.ui.aio import Tasks
from app.ui.dialogs import ask
from app.ui.facade import NodeFacade
from app.ui.providers import AccountBox
from app.ui.views.keys import KeysBox
from app.ui.views.login_item import LoginItemBox, autostart_for
from app.ui.views.models_box import ModelsBox
from app.ui.views.pairing import InviteDialog, JoinDialog
from app.ui.views.peer_rented import PeerRentedBox
from app.ui.welcome import DiscoverDialog


class SettingsView(QScrollArea):
    sign_in_requested = Signal(str)  # a provider's key

    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks = facade, tasks
        self.setWidgetResizable(True)
        inner = QWidget()
        layout = QVBoxLayout(inner)
        self.setWidget(inner)

        cluster = QGroupBox("Cluster")
        c = QVBoxLayout(cluster)
        self.peers = QListWidget()
        self.peers.setObjectName("peers")
        self.peers.setMaximumHeight(110)
        row = QHBoxLayout()
        self.invite_button = QPushButton("Invite a machine…")
        self.join_button = QPushButton("Join a cluster…")
        self.invite_button.clicked.connect(self.invite)
        self.join_button.clicked.connect(self.join)
        row.addWidget(self.invite_button)
        row.addWidget(self.join_button)
        row.addStretch(1)
        self.cluster_note = QLabel("")
        c.addWidget(QLabel("Paired machines"))
        c.addWidget(self.peers)
        c.addLayout(row)
        c.addWidget(self.cluster_note)
        layout.addWidget(cluster)

        engines = QGroupBox("Engines on this machine")
        e = QVBoxLayout(engines)
        self.engines = QListWidget()
        self.engines.setObjectName("engines")
        self.engines.setMaximumHeight(110)
        e.addWidget(self.engines)
        add = QHBoxLayout()
        self.engine_name = QLineEdit()
        self.engine_name.setPlaceholderText("name")
        self.engine_url = QLineEdit()
        self.engine_url.setPlaceholderText("http://127.0.0.1:8080")
        self.engine_api = QComboBox()
        self.engine_api.addItems(["ollama", "openai"])
        self.engine_add = QPushButton("Add")
        self.engine_remove = QPushButton("Remove selected")
        for widget in (self.engine_name, self.engine_url, self.engine_api, self.engine_add, self.engine_remove):
            add.addWidget(widget)
        self.engine_add.clicked.connect(self.add_engine)
        self.engine_remove.clicked.connect(self.remove_engine)
        e.addLayout(add)
        self.discover_button = QPushButton("Discover engines on this machine…")
        self.discover_button.setObjectName("discoverEngines")
        self.discover_button.clicked.connect(self.discover)
        self.discover_ports: list[int] | None = None  # None: the usual ports (tests name their own)
        e.addWidget(self.discover_button, alignment=Qt.AlignmentFlag.AlignLeft)
        self.engine_note = QLabel("")
        self.engine_note.setWordWrap(True)
        e.addWidget(self.engine_note)
        layout.addWidget(engines)
        self.models_box = ModelsBox(facade, tasks)
        layout.addWidget(self.models_box)

        off_lan = QGroupBox("Off-LAN routing for this machine's apps")
        o = QVBoxLayout(off_lan)
        self.allow = QRadioButton("Allow: prompts may go to rented GPUs (each one is flagged in Jobs)")
        self.deny = QRadioButton("Deny: prompts from this machine never leave the LAN")
        group = QButtonGroup(self)
        group.addButton(self.allow)
        group.addButton(self.deny)
        self.allow.toggled.connect(self._off_lan_toggled)
        o.addWidget(self.allow)
        o.addWidget(self.deny)
        layout.addWidget(off_lan)
        self.peer_rented_box = PeerRentedBox(facade, tasks)
        layout.addWidget(self.peer_rented_box)
        self.keys_box = KeysBox(facade, tasks)
        layout.addWidget(self.keys_box)

        # Each provider's account (who is signed in, Sign in, Sign out), as it registered it.
        self.account_boxes: dict[str, AccountBox] = {}
        for provider in providers.registered():
            if provider.account_box is not None:
                box = provider.account_box(facade, tasks, functools.partial(self.sign_in_requested.emit, provider.key))
                self.account_boxes[provider.key] = box
                layout.addWidget(box)
        # The demo is a sandbox: it never writes (or removes) the real login item.
        self.login_item = None if facade.is_demo() else LoginItemBox(autostart_for(Path(facade.home)))
        if self.login_item is not None:
            layout.addWidget(self.login_item)
        else:
            demo_note = QLabel("The demo adds no login item: start it with 'pairwise demo' when you want it.")
            demo_note.setObjectName("demoNoLoginItem")
            demo_note.setWordWrap(True)
            layout.addWidget(demo_note)
        layout.addStretch(1)

    def refresh(self) -> None:
        self.peers.clear()
        available = self.facade.cluster_available()
        for peer in self.facade.peers():
            state = "online" if peer.get("online") else "offline"
            self.peers.addItem(f"{peer.get('name')} — {state} · {peer.get('address') or ''}")
        if not available:
            self.cluster_note.setText("The cluster is not part of this build.")
        self.invite_button.setEnabled(available)
        self.join_button.setEnabled(available)
        self.engines.clear()
        for engine in self.facade.engines():
            models = ", ".join(engine.get("models") or []) or "no models"
            self.engines.addItem(f"{engine['name']} ({engine['api']}) {engine['url']} — {engine.get('error') or models}")
        self.allow.blockSignals(True)
        (self.allow if self.facade.off_lan_policy() == "allow" else self.deny).setChecked(True)
        self.allow.blockSignals(False)
        self.models_box.refresh()
        self.peer_rented_box.refresh()
        self.keys_box.refresh()
        for box in self.account_boxes.values():
            box.refresh()

    def _off_lan_toggled(self, allow: bool) -> None:
        self.tasks.spawn(self.facade.change_settings(SettingsChange(off_lan="allow" if allow else "deny")), name="off-LAN policy")

    def invite(self) -> None:
        dialog = InviteDialog(self.facade, self.tasks, self)
        self.tasks.spawn(self._after(dialog), name="invite dialog")

    def join(self) -> None:
        dialog = JoinDialog(self.facade, self.tasks, self)
        self.tasks.spawn(self._after(dialog), name="join dialog")

    async def _after(self, dialog: InviteDialog | JoinDialog | DiscoverDialog) -> None:
        await ask(dialog)
        self.refresh()

    def discover(self) -> None:
        dialog = DiscoverDialog(self.facade, self.tasks, self, ports=self.discover_ports)
        dialog.panel.adopted.connect(self.refresh)
        dialog.panel.look()
        self.tasks.spawn(self._after(dialog), name="discover dialog")

    def add_engine(self) -> None:
        data = {"name": self.engine_name.text().strip(), "url": self.engine_url.text().strip(),
                "api": self.engine_api.currentText()}

        async def run() -> None:
            described = await self.facade.engine_add(data, None)
            self.engine_note.setText(f"Engine {described['name']} added: {', '.join(described.get('models') or []) or 'no models yet'}.")
            self.engine_name.clear()
            self.engine_url.clear()
            self.refresh()

        self.tasks.spawn(run(), name="add engine", on_error=lambda t, m: self.engine_note.setText(f"{t}: {m}"))

    def remove_engine(self) -> None:
        item = self.engines.currentItem()
        if item is None:
            return
        name = item.text().split(" ", 1)[0]

        async def run() -> None:
            await self.facade.engine_remove(name)
            self.engine_note.setText(f"Engine {name} removed.")
            self.refresh()

        self.tasks.spawn(run(), name="remove engine", on_error=lambda t, m: self.engine_note.setText(f"{t}: {m}"))
