"""Batches: each batch of this node with its status, progress (done of total, failed), rate, ETA
and cost so far, and a Cancel that asks first. The same service as ``pairwise batch list|cancel``
and the front door's ``/v1/batches``."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.services.api import glossary
from app.services.api.batch import BatchObject
from app.services.errors import FeatureMissing
from app.ui import fmt
from app.ui.aio import Tasks
from app.ui.dialogs import confirm
from app.ui.facade import NodeFacade
from app.ui.tables import read_only_table

COLUMNS = ["Started", "Batch", "Model", "Status", "Progress", "Failed", "Rate", "ETA", "Cost so far"]
CANCELLABLE = ("validating", "in_progress")
FINAL = ("completed", "failed", "cancelled", "expired")
EMPTY_HINT = ("No batches yet. Start one with `pairwise batch run FILE --model M` (a JSONL file of requests), "
              "or from any OpenAI client through the Batch API at http://{listen}/v1 (files.create, then "
              "batches.create). Each batch shows here with its progress, ETA and cost.")
CANCEL_TIP = ("The lines already answered are kept in its output file; the rest are not sent. "
              "A cancelled batch cannot be resumed.")
STATUS_WORDS = {"validating": "checking its lines", "in_progress": "running", "finalizing": "writing results",
                "completed": "done", "failed": "failed", "cancelling": "cancelling…", "cancelled": "cancelled",
                "expired": "expired (past its window)"}


def batch_cells(batch: BatchObject) -> list[str]:
    counts = batch["request_counts"]
    extra = batch.get("pairwise")
    status = batch["status"]
    done = counts["completed"] + counts["failed"]
    total = counts["total"]
    percent = f" ({100 * done // total}%)" if total else ""
    running = status not in FINAL
    rate = f"{extra['lines_per_s']:.1f} lines/s" if extra and running and extra["lines_per_s"] else "–"
    eta = fmt.duration(extra["eta_s"]) if extra and running and extra["eta_s"] is not None else "–"
    cost = glossary.money(extra["cost_usd"]) if extra else "–"
    if extra and extra["budget_usd"] is not None:
        cost += f" of {glossary.money(extra['budget_usd'])}"
    return [fmt.when(batch["created_at"]), batch["id"], batch["model"] or "–", STATUS_WORDS.get(status, status),
            f"{done} of {total}{percent}", str(counts["failed"]) if counts["failed"] else "–", rate, eta, cost]


class BatchesView(QWidget):
    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks = facade, tasks
        self.batches: list[BatchObject] = []
        layout = QVBoxLayout(self)
        self.empty = QLabel("")
        self.empty.setObjectName("batchesEmpty")
        self.empty.setWordWrap(True)
        self.empty.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # the command, to copy
        self.table = read_only_table("batches", COLUMNS, COLUMNS.index("Batch"))
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        buttons = QHBoxLayout()
        self.message = QLabel("")
        self.message.setObjectName("batchesMessage")
        self.message.setWordWrap(True)
        self.cancel_button = QPushButton("Cancel batch…")
        self.cancel_button.setObjectName("cancelBatch")
        self.cancel_button.clicked.connect(lambda: self.tasks.spawn(self.cancel_selected(), name="cancel batch",
                                                                    on_error=self._error))
        buttons.addWidget(self.message, 1)
        buttons.addWidget(self.cancel_button)
        for widget in (self.empty, self.table):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self._update_buttons()

    def refresh(self) -> None:
        try:
            self.batches = self.facade.batches()
        except FeatureMissing as exc:  # a node without batches says so instead of a table
            self.batches = []
            self.message.setText(str(exc))
        selected = self.selected_id()
        self.empty.setVisible(not self.batches)
        self.table.setVisible(bool(self.batches))
        if not self.batches:
            self.empty.setText(EMPTY_HINT.format(listen=self.facade.status().get("listen") or "127.0.0.1:11434"))
        self.table.setUpdatesEnabled(False)  # one repaint for the whole table
        try:
            self.table.setRowCount(len(self.batches))
            for r, batch in enumerate(self.batches):
                for c, text in enumerate(batch_cells(batch)):
                    item = QTableWidgetItem(text)
                    item.setData(Qt.ItemDataRole.UserRole, batch["id"])
                    self.table.setItem(r, c, item)
                if batch["id"] == selected:
                    self.table.selectRow(r)
        finally:
            self.table.setUpdatesEnabled(True)
        self._update_buttons()

    def select(self, batch_id: str) -> bool:
        for r, batch in enumerate(self.batches):
            if batch["id"] == batch_id:
                self.table.selectRow(r)
                return True
        return False

    def selected_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.table.item(rows[0].row(), 0)
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def _selected(self) -> BatchObject | None:
        batch_id = self.selected_id()
        return next((b for b in self.batches if b["id"] == batch_id), None)

    def _update_buttons(self) -> None:
        batch = self._selected()
        self.cancel_button.setEnabled(batch is not None and batch["status"] in CANCELLABLE)

    async def cancel_selected(self) -> bool:
        batch = self._selected()
        if batch is None or batch["status"] not in CANCELLABLE:
            return False
        counts = batch["request_counts"]
        done = counts["completed"] + counts["failed"]
        title = f"Cancel batch {batch['id']}?"
        text = f"Cancel this batch? {done} of {counts['total']} lines are done."
        if not await confirm(self, title, text, action="Cancel batch", informative=CANCEL_TIP,
                             destructive=True, cancel="Keep running"):
            return False
        self.message.setText(f"Cancelling {batch['id']}… the lines already done are kept.")
        await self.facade.batch_cancel(batch["id"])
        self.refresh()
        return True

    def _error(self, title: str, message: str) -> None:
        self.message.setText(f"{title}: {message}")

    def cells(self) -> list[list[str]]:
        """The table as text (for tests and the screenshot tool)."""
        return [[(cell.text() if (cell := self.table.item(r, c)) is not None else "")
                 for c in range(self.table.columnCount())] for r in range(self.table.rowCount())]
