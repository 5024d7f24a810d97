"""Settings' "Models": each model with its names, its copies and their windows; "Same model…" links
names (asked first: only the user's word makes them one model), Unlink takes them apart, and the
names that look like one model are offered as a hint whose one click still asks. The same service
calls as ``pairwise models``, ``models same``, ``models unlink`` and ``models suggest``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.services.api.models import CopyRow, ModelRow, SuggestionRow
from app.services.api.rows import is_rented
from app.ui.aio import Tasks
from app.ui.dialogs import confirm
from app.ui.facade import NodeFacade
from app.ui.memory_fit import estimate

NAMES_ROLE = Qt.ItemDataRole.UserRole
COLUMNS = ["Model", "Copies and their windows", "Memory at that window"]
EMPTY = "No models yet: add an engine, pair a machine or rent a GPU."


def copy_text(copy: CopyRow) -> str:
    return f"{copy['copy']} on {copy['node']} (window {copy['window'] or 'unknown'})"


def model_text(row: ModelRow) -> str:
    """"qwen2.5:7b = Qwen2.5-7B-GGUF · ol on desk (window 8192), gg on desk (window unknown)"."""
    copies = ", ".join(copy_text(c) for c in row["copies"])
    return f"{' = '.join(row['names'])} · {copies or 'no copy now'}"


def fit_text(copy: CopyRow, hardware: Mapping[str, Mapping[str, Any]]) -> str:
    """One copy's memory at its window, on the machine it runs on (a rented GPU's is not in its row)."""
    fit = estimate(copy["name"], copy["window"], hardware.get(copy["node"]) if copy["kind"] != "rented" else None)
    if fit is None:
        return f"{copy['copy']}: size not stated in its name"
    return f"{copy['copy']}: {fit.text()}"


class ModelsBox(QGroupBox):
    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__("Models", parent)
        self.facade, self.tasks = facade, tasks
        layout = QVBoxLayout(self)
        intro = QLabel("Each model with its names and where it runs. Names you link are one model: "
                       "a request for any of them may go to any copy.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.models = QTableWidget(0, len(COLUMNS))
        self.models.setObjectName("models")
        self.models.setHorizontalHeaderLabels(COLUMNS)
        self.models.verticalHeader().hide()
        self.models.setMinimumHeight(self.fontMetrics().lineSpacing() * 6)
        self.models.setMaximumHeight(self.fontMetrics().lineSpacing() * 14)
        # Never sideways: the columns share the width, each cell wraps at words and a long name is cut in
        # the middle (its whole text is the cell's tooltip).
        self.models.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.models.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.models.horizontalHeader().setMinimumSectionSize(self.fontMetrics().averageCharWidth() * 8)
        self.models.setWordWrap(True)
        self.models.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.models.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.models.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.models.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.models.itemSelectionChanged.connect(self._selection_changed)
        layout.addWidget(self.models)
        buttons = QHBoxLayout()
        self.same_button = QPushButton("Same model…")
        self.same_button.setToolTip("Link the selected models' names as one model")
        self.unlink_button = QPushButton("Unlink")
        self.unlink_button.setToolTip("Take the selected model's names apart again")
        self.same_button.clicked.connect(self.link_selected)
        self.unlink_button.clicked.connect(self.unlink_selected)
        buttons.addWidget(self.same_button)
        buttons.addWidget(self.unlink_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.hints = QVBoxLayout()
        layout.addLayout(self.hints)
        self.hint_buttons: list[QPushButton] = []
        self.note = QLabel("")
        self.note.setObjectName("modelsNote")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self._selection_changed()

    # -- showing ---------------------------------------------------------------------------------------

    def refresh(self) -> None:
        hardware = {str(n["name"]): n["hardware"] for n in self.facade.nodes()
                    if not is_rented(n) and isinstance(n["hardware"], Mapping)}
        rows = self.facade.models()
        self.models.setRowCount(len(rows) or 1)
        for r, row in enumerate(rows):
            cells = ["\n".join(row["names"]), "\n".join(copy_text(c) for c in row["copies"]) or "no copy now",
                     "\n".join(fit_text(c, hardware) for c in row["copies"]) or "–"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setData(NAMES_ROLE, list(row["names"]))
                self.models.setItem(r, c, item)
        if not rows:
            self.models.setItem(0, 0, QTableWidgetItem(EMPTY))
            self.models.setSpan(0, 0, 1, len(COLUMNS))
        else:
            self.models.clearSpans()
        self.models.resizeRowsToContents()
        self._selection_changed()
        self.tasks.spawn(self._suggest(), name="model suggestions",
                         on_error=lambda t, m: self.note.setText(f"{t}: {m}"))

    async def _suggest(self) -> None:
        self._show_hints(await self.facade.models_suggest())

    def _show_hints(self, suggestions: list[SuggestionRow]) -> None:
        while self.hints.count():
            taken = self.hints.takeAt(0)
            widget = taken.widget() if taken is not None else None
            if widget is not None:
                widget.deleteLater()
        self.hint_buttons = []
        for suggestion in suggestions:
            names = list(suggestion["names"])
            row = QWidget()
            line = QHBoxLayout(row)
            line.setContentsMargins(0, 0, 0, 0)
            hint = QLabel(f"These look like one model: {', '.join(names)}")
            hint.setWordWrap(True)
            button = QPushButton("Same model…")
            button.setObjectName("suggestedSame")
            button.clicked.connect(lambda _c=False, n=names: self.link(n))
            line.addWidget(hint, 1)
            line.addWidget(button)
            self.hints.addWidget(row)
            self.hint_buttons.append(button)

    def _selected_names(self) -> list[list[str]]:
        rows = sorted({index.row() for index in self.models.selectionModel().selectedIndexes()})
        items = [self.models.item(r, 0) for r in rows]
        return [list(item.data(NAMES_ROLE)) for item in items if item is not None and item.data(NAMES_ROLE)]

    def texts(self) -> list[str]:
        """Each row as one line (the names, the copies, the memory), as a person reads across it."""
        out = []
        for r in range(self.models.rowCount()):
            cells = [self.models.item(r, c) for c in range(self.models.columnCount())]
            out.append(" · ".join(cell.text().replace("\n", ", ") for cell in cells if cell is not None))
        return out

    def _selection_changed(self) -> None:
        selected = self._selected_names()
        self.same_button.setEnabled(len(selected) >= 2)
        self.unlink_button.setEnabled(len(selected) == 1 and len(selected[0]) >= 2)

    # -- changing --------------------------------------------------------------------------------------

    def link_selected(self) -> None:
        self.link([name for names in self._selected_names() for name in names])

    def link(self, names: list[str]) -> None:
        async def run() -> None:
            shown = ", ".join(names)
            agreed = await confirm(
                self, "Same model?", f"Treat {shown} as one model?", action="Same model",
                informative="Pairwise never decides this by itself: they become one model only because you say "
                            "so. A request for any of these names may then be answered by any of their copies. "
                            "Unlink takes them apart again.")
            if not agreed:
                self.note.setText("Nothing linked.")
                return
            joined = await self.facade.models_same(names)
            self.note.setText(f"One model now: {', '.join(joined)}.")
            self.refresh()

        self.tasks.spawn(run(), name="same model", on_error=lambda t, m: self.note.setText(f"{t}: {m}"))

    def unlink_selected(self) -> None:
        selected = self._selected_names()
        if len(selected) != 1:
            return
        names = selected[0]

        async def run() -> None:
            await self.facade.models_unlink(names)
            self.note.setText(f"Unlinked: {', '.join(names)} are separate models again.")
            self.refresh()

        self.tasks.spawn(run(), name="unlink model", on_error=lambda t, m: self.note.setText(f"{t}: {m}"))
