"""The node list: every node in one table. Rented nodes say **Rented · off-LAN** with GPU,
provider, state, price and sponsor; LAN nodes show their engines and models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from app.services.api import glossary
from app.services.api.rows import NodeRow, is_rented
from app.ui import fmt
from app.ui.facade import NodeFacade
from app.ui.palette import off_lan_colour

COLUMNS = ["Name", "Kind", "State", "GPU / engines", "Models", "Price", "Provider", "Rented by"]
RENTED_LABEL = "Rented · off-LAN"


def row_cells(node: NodeRow) -> list[str]:
    if is_rented(node):  # this node's or a peer's: a peer's may lack any key
        fact: Mapping[str, Any] = node
        models = ", ".join(fact.get("models") or []) or "–"
        label = str(fact.get("label") or RENTED_LABEL) + (" · simulated" if fact.get("simulated") else "")
        return [str(fact.get("name")), label, glossary.rented_state(fact), str(fact.get("gpu") or "–"),
                models, glossary.per_hour(fact.get("price_per_hour")), glossary.provider(fact.get("provider")),
                str(fact.get("sponsor") or "–")]
    models = ", ".join(node["models"]) or "–"
    engines = ", ".join(f"{e.get('name')} ({e.get('api')})" for e in node["engines"] or []) or "no engines"
    kind = "This machine" if node["kind"] == "local" else "LAN"
    return [node["name"], kind, fmt.node_state(node), engines, models, "free", "–", "–"]


class NodeList(QTableWidget):
    node_selected = Signal(str)

    def __init__(self, facade: NodeFacade, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.facade = facade
        self.setObjectName("nodeList")
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.rows: list[NodeRow] = []
        self.itemSelectionChanged.connect(self._selected)

    def refresh(self) -> None:
        current = self.selected_name()
        self.rows = self.facade.nodes()
        self.blockSignals(True)
        self.setRowCount(len(self.rows))
        bold = QFont()
        bold.setBold(True)
        for r, node in enumerate(self.rows):
            for c, text in enumerate(row_cells(node)):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, node.get("name"))
                if is_rented(node) and c == 1:
                    item.setForeground(QBrush(off_lan_colour(self.palette())))
                    item.setFont(bold)
                    item.setToolTip("Prompts served here leave your LAN")
                self.setItem(r, c, item)
        self.blockSignals(False)
        if current:
            self.select(current)

    def selected_name(self) -> str | None:
        items = self.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def select(self, name: str) -> bool:
        for r, node in enumerate(self.rows):
            if node.get("name") == name:
                self.selectRow(r)
                return True
        return False

    def _selected(self) -> None:
        name = self.selected_name()
        if name:
            self.node_selected.emit(name)
