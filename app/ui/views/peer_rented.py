"""Settings' "Peers' rented GPUs": for each rented node a peer shares, the policy this node routes
to it under. The peer only proposes (its sponsor's wish is shown, never applied); this node decides,
through the same service call as ``pairwise settings peer-rented NODE --use POLICY``."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from app.services.api import glossary
from app.services.api.snapshots import PeerRentedRow
from app.settings import DEFAULT_PEER_RENTED_POLICY, PEER_RENTED_POLICIES
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade

CHOICES = ["default", *PEER_RENTED_POLICIES]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def choice_text(policy: str) -> str:
    if policy == "default":
        return f"Default: {_lower_first(glossary.policy(DEFAULT_PEER_RENTED_POLICY))}"
    return glossary.policy(policy)


class PeerRentedBox(QGroupBox):
    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__("Peers' rented GPUs", parent)
        self.facade, self.tasks = facade, tasks
        layout = QVBoxLayout(self)
        intro = QLabel("A paired machine may share a GPU it rents. It can only propose how it is used: "
                       "this machine decides.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.form = QFormLayout()
        layout.addLayout(self.form)
        self.empty = QLabel("No paired machine shares a rented GPU now.")
        layout.addWidget(self.empty)
        self.note = QLabel("")
        self.note.setObjectName("peerRentedNote")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.combos: dict[str, QComboBox] = {}  # node id -> its policy picker
        self._chosen: dict[str, str] = {}  # node id -> the saved choice (what a failed save goes back to)

    def refresh(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.combos.clear()
        self._chosen.clear()
        rows = self.facade.peer_rented()
        self.empty.setVisible(not rows)
        for row in rows:
            self._add_row(row)

    def _add_row(self, row: PeerRentedRow) -> None:
        node_id = str(row["id"])
        chosen = str(row["policy"]) if row.get("set") else "default"
        combo = QComboBox()
        combo.setObjectName(f"peerRented:{node_id}")
        for policy in CHOICES:
            combo.addItem(choice_text(policy), policy)
        combo.setCurrentIndex(CHOICES.index(chosen) if chosen in CHOICES else 0)
        combo.currentIndexChanged.connect(lambda _i, n=node_id: self._changed(n))
        label = f"{row.get('name') or node_id} (shared by {row['via']})" if row.get("via") else \
            f"{node_id} (not seen now)"
        self.form.addRow(label, combo)
        if row.get("sponsor_policy"):
            wish = QLabel(f"{row.get('via')} proposes: {_lower_first(glossary.policy(row['sponsor_policy']))}")
            wish.setWordWrap(True)
            self.form.addRow("", wish)
        self.combos[node_id] = combo
        self._chosen[node_id] = chosen

    def _changed(self, node_id: str) -> None:
        combo = self.combos[node_id]
        policy = str(combo.currentData())
        if policy == self._chosen.get(node_id):
            return

        async def run() -> None:
            await self.facade.set_peer_rented(node_id, policy)
            self._chosen[node_id] = policy
            self.note.setText(f"Saved: {_lower_first(choice_text(policy))}.")

        def failed(title: str, message: str) -> None:
            self.note.setText(f"{title}: {message}")
            old = self._chosen.get(node_id, "default")
            combo.blockSignals(True)
            combo.setCurrentIndex(CHOICES.index(old))
            combo.blockSignals(False)

        self.tasks.spawn(run(), name="peer rented policy", on_error=failed)
