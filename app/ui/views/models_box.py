"""Settings' "Models": each model with its names, its copies and their windows; "Same model…" links
names (asked first: only the user's word makes them one model), Unlink takes them apart, and the
names that look like one model are offered as a hint whose one click still asks. The same service
calls as ``pairwise models``, ``models same``, ``models unlink`` and ``models suggest``."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services.api.models import ModelRow, SuggestionRow
from app.ui.aio import Tasks
from app.ui.dialogs import confirm
from app.ui.facade import NodeFacade

NAMES_ROLE = Qt.ItemDataRole.UserRole


def model_text(row: ModelRow) -> str:
    """"qwen2.5:7b = Qwen2.5-7B-GGUF · ol on desk (window 8192), gg on desk (window unknown)"."""
    copies = ", ".join(f"{c['copy']} on {c['node']} (window {c['window'] or 'unknown'})" for c in row["copies"])
    return f"{' = '.join(row['names'])} · {copies or 'no copy now'}"


class ModelsBox(QGroupBox):
    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__("Models", parent)
        self.facade, self.tasks = facade, tasks
        layout = QVBoxLayout(self)
        intro = QLabel("Each model with its names and where it runs. Names you link are one model: "
                       "a request for any of them may go to any copy.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.models = QListWidget()
        self.models.setObjectName("models")
        self.models.setMaximumHeight(130)
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
        self.models.clear()
        for row in self.facade.models():
            item = QListWidgetItem(model_text(row))
            item.setData(NAMES_ROLE, list(row["names"]))
            self.models.addItem(item)
        if not self.models.count():
            self.models.addItem(QListWidgetItem("No models yet: add an engine, pair a machine or rent a GPU."))
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
        return [list(item.data(NAMES_ROLE)) for item in self.models.selectedItems() if item.data(NAMES_ROLE)]

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
