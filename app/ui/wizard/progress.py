"""Creating the endpoint, then live progress through Hugging Face's states until it runs.

State comes from the node's snapshot of the rented node (the HF lifecycle polls the management
API; no inference call wakes or bills anything here)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWizardPage

from app.services.errors import PairwiseError
from app.ui import fmt
from app.ui.aio import Tasks, error_text
from app.ui.facade import NodeFacade

POLL_MS = 250
STEPS = [
    ("create", "Creating the endpoint on Hugging Face"),
    ("pending", "Pending: Hugging Face is finding a GPU"),
    ("initializing", "Initializing: the model is loading (billing has started)"),
    ("running", "Running: the model is part of your cluster"),
]
ORDER = {"create": 0, "pending": 1, "initializing": 2, "updating": 2, "running": 3}
# A batch window's job stages (the node's hf_state) as the same steps; anything else has ended it.
WINDOW_TEXTS = [
    ("create", "Starting the job on Hugging Face"),
    ("pending", "Scheduling: Hugging Face is finding a GPU"),
    ("initializing", "Loading: the container pulls and the model loads (billing has started)"),
    ("running", "Running: the model is part of your cluster until the window ends"),
]
WINDOW_STEPS = {"SCHEDULING": "pending", "LOADING": "initializing", "UPDATING": "initializing", "RUNNING": "running"}


class ProgressPage(QWizardPage):
    def __init__(self, facade: NodeFacade, tasks: Tasks) -> None:
        super().__init__()
        self.facade, self.tasks = facade, tasks
        self.setTitle("Starting your rented GPU")
        layout = QVBoxLayout(self)
        self.labels: list[QLabel] = []
        for _key, text in STEPS:
            label = QLabel(f"○ {text}")
            self.labels.append(label)
            layout.addWidget(label)
        self.detail = QLabel("")
        self.detail.setObjectName("progressDetail")
        self.detail.setWordWrap(True)
        layout.addWidget(self.detail)
        layout.addStretch(1)
        self.name: str | None = None
        self.state = "create"
        self.seen: list[str] = []
        self.failed = False
        self.windowed = False  # a batch window (a Hugging Face Job), not an endpoint
        self.steps = STEPS
        self.row: dict[str, Any] = {}
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.poll)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        wizard: Any = self.wizard()
        params = wizard.choice.params or {}
        self.name = params.get("name")
        self.windowed = bool(params.get("window"))
        self.steps = WINDOW_TEXTS if self.windowed else STEPS
        self.show_state("create")
        self.tasks.spawn(self._create(params), name=f"create {self.name}")

    async def _create(self, params: dict[str, Any]) -> None:
        try:
            create = self.facade.window_create if self.windowed else self.facade.rented_create
            self.row = await create(params)
        except PairwiseError as exc:
            title, message = error_text(exc)
            self.fail(f"{title}: {message}")
            return
        self.poll()
        self._poll.start()

    def poll(self) -> None:
        row = self.facade.rented_row(self.name or "")
        if row is None:
            return
        self.row = row
        hf_state = str(row.get("hf_state") or "pending")
        if self.windowed:
            if hf_state not in WINDOW_STEPS:
                lines = "<br>".join(row.get("last_log_lines") or [])
                self.fail(f"the batch window ended: {row.get('hf_message') or hf_state}"
                          + (f"<br><tt>{lines}</tt>" if lines else ""))
                return
            hf_state = WINDOW_STEPS[hf_state]
        if hf_state in ("failed", "updateFailed"):
            self.fail(f"Hugging Face reports {hf_state}: {row.get('hf_message') or 'no message'}")
            return
        self.show_state(hf_state)

    def show_state(self, hf_state: str) -> None:
        if not self.seen or self.seen[-1] != hf_state:
            self.seen.append(hf_state)
        self.state = hf_state
        reached = ORDER.get(hf_state, 1)
        for i, (_key, text) in enumerate(self.steps):
            mark = "✔" if i < reached or hf_state == "running" else ("▶" if i == reached else "○")
            self.labels[i].setText(f"{mark} {text}")
        cost = (self.row.get("cost") or {}).get("session_usd")
        price = self.row.get("price_per_hour")
        if hf_state == "running":
            self._poll.stop()
            done = (f"Hugging Face ends the window by {self.row.get('window_ends_at')}." if self.windowed
                    else "Pause it from the tray menu when you are done.")
            self.detail.setText(f"{self.name} is running at {fmt.price(price)}. Cost so far: {fmt.money(cost)}. "
                                + done)
        elif hf_state not in ORDER:
            self.detail.setText(f"Hugging Face says: {hf_state}. {self.row.get('hf_message') or ''}")
        elif hf_state != "create":
            self.detail.setText(f"Hugging Face says: {hf_state}. {self.row.get('hf_message') or ''}")
        self.completeChanged.emit()

    def fail(self, message: str) -> None:
        self._poll.stop()
        self.failed = True
        self.detail.setText(f"<b>Failed.</b> {message}")
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return self.failed or self.state == "running"

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        return -1  # the last page of the rent path: Finish

    def cleanupPage(self) -> None:  # noqa: N802 - Qt's name
        self._poll.stop()
