"""Jobs: what is running now and what ran, newest first. Off-LAN work is flagged with the
rented node that served it; each row has its serving node, origin, duration, tokens, cost and why
it went where it went (the route reason, in plain words)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.services.api import glossary
from app.services.api.snapshots import JobRow
from app.ui import fmt
from app.ui.facade import NodeFacade
from app.ui.palette import off_lan_colour
from app.ui.route_words import plain_route
from app.ui.tables import read_only_table

COLUMNS = ["Started", "Model", "State", "Served by", "Off-LAN", "Origin", "Requester", "Duration", "Tokens", "Cost",
           "Why here"]
HISTORY_LIMIT = 100
STATE_COLUMN = COLUMNS.index("State")
WHY_COLUMN = COLUMNS.index("Why here")
WHY_WIDTH = 90
EMPTY_HINT = ("No requests yet. Point any app at http://{listen} (OpenAI clients: http://{listen}/v1) and its "
              "requests show here, with the machine that served them.")


def job_cells(job: JobRow) -> list[str]:
    off_lan = "⚠ yes" if job.get("off_lan") else ""
    state = str(job.get("state"))
    if job.get("error"):
        state += f": {job['error']}"
    return [fmt.when(job.get("created_at")), str(job.get("model")), state, str(job.get("serving_node") or "–"),
            off_lan, str(job.get("origin_node") or "–"), glossary.plain(str(job.get("requester_text") or "–")),
            fmt.duration(fmt.job_duration(job)), fmt.tokens(job),
            glossary.money(job.get("cost_usd")) if job.get("cost_usd") is not None else "–",
            _short(plain_route(job.get("route"))) or "–"]


def _short(text: str) -> str:
    """The cell keeps the table readable; the whole reason is in the cell's tooltip."""
    return text if len(text) <= WHY_WIDTH else text[: WHY_WIDTH - 1] + "…"


def _table(name: str) -> QTableWidget:
    return read_only_table(name, COLUMNS, STATE_COLUMN)  # errors are the long text


class JobsView(QWidget):
    def __init__(self, facade: NodeFacade, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade = facade
        layout = QVBoxLayout(self)
        self.active_label = QLabel("Active")
        self.active = _table("activeJobs")
        self.active.setMaximumHeight(160)
        self.history_label = QLabel("History")
        self.history = _table("jobHistory")
        self.empty = QLabel("")
        self.empty.setObjectName("jobsEmpty")
        self.empty.setWordWrap(True)
        for widget in (self.empty, self.active_label, self.active, self.history_label, self.history):
            layout.addWidget(widget)

    def refresh(self) -> None:
        jobs = self.facade.jobs(limit=HISTORY_LIMIT)
        active = [j for j in jobs if j.get("state") in ("queued", "running")]
        done = [j for j in jobs if j.get("state") not in ("queued", "running")]
        self.active_label.setText(f"Running now ({len(active)})" if active else "Running now: nothing")
        self.history_label.setText(f"History (last {len(done)})" if done else "History: none yet")
        self.empty.setVisible(not jobs)
        if not jobs:
            self.empty.setText(EMPTY_HINT.format(listen=self.facade.status().get("listen") or "127.0.0.1:11434"))
        self._fill(self.active, active)
        self._fill(self.history, done)

    def _fill(self, table: QTableWidget, jobs: list[JobRow]) -> None:
        table.setUpdatesEnabled(False)  # one repaint for the whole table, not one per cell
        try:
            self._cells(table, jobs)
        finally:
            table.setUpdatesEnabled(True)

    def _cells(self, table: QTableWidget, jobs: list[JobRow]) -> None:
        table.setRowCount(len(jobs))
        for r, job in enumerate(jobs):
            for c, text in enumerate(job_cells(job)):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, job.get("id"))
                if job.get("off_lan"):
                    item.setForeground(QBrush(off_lan_colour(table.palette())))
                    item.setToolTip(f"This prompt left your LAN: served by {job.get('rented_node')}")
                elif c == WHY_COLUMN and job.get("route"):
                    # In plain words, then as recorded (what `pairwise jobs` and X-Pairwise-Route say).
                    item.setToolTip(f"{plain_route(job['route'])}\n\n{job['route']}")
                table.setItem(r, c, item)

    def cells(self, table: QTableWidget) -> list[list[str]]:
        """The table as text (for tests and the screenshot tool)."""
        return [[(cell.text() if (cell := table.item(r, c)) is not None else "") for c in range(table.columnCount())]
                for r in range(table.rowCount())]
