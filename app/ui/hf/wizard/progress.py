"""Creating the endpoint, then live progress through Hugging Face's states until it runs.

State comes from the node's snapshot of the rented node (the HF lifecycle polls the management
API; no inference call wakes or bills anything here)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWizardPage

from app.services.api.rows import RentedRow
from app.services.errors import PairwiseError
from app.ui import fmt
from app.ui.aio import Tasks, error_text
from app.ui.facade import NodeFacade
from app.ui.hf.wizard.state import HfPage, WizardState, state_of
from app.ui.sizing import scrolling

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
    rent_state: WizardState | None = None

    def __init__(self, facade: NodeFacade, tasks: Tasks) -> None:
        super().__init__()
        self.facade, self.tasks = facade, tasks
        self.setTitle("Starting your rented GPU")
        layout = scrolling(self, QVBoxLayout)
        self.labels: list[QLabel] = []
        for _key, text in STEPS:
            label = QLabel(f"○ {text}")
            self.labels.append(label)
            layout.addWidget(label)
        self.detail = QLabel("")
        self.detail.setObjectName("progressDetail")
        self.detail.setWordWrap(True)
        layout.addWidget(self.detail)
        self.usage = QLabel("")
        self.usage.setObjectName("progressUsage")
        self.usage.setWordWrap(True)
        self.usage.setTextInteractionFlags(self.usage.textInteractionFlags() | Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.usage)
        self.change = QPushButton("Change settings and try again")
        self.change.setObjectName("changeSettings")
        self.change.setVisible(False)
        self.change.clicked.connect(self.back_to_settings)
        layout.addWidget(self.change)
        layout.addStretch(1)
        self.retry_settings = False
        self.name: str | None = None
        self.state = "create"
        self.seen: list[str] = []
        self.failed = False
        self.windowed = False  # a batch window (a Hugging Face Job), not an endpoint
        self.steps = STEPS
        self.created = False
        self.row: RentedRow | None = None  # once created
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.poll)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        wizard = state_of(self)
        params = wizard.choice.params or {}
        self.name = params.get("name")
        self.windowed = bool(params.get("window"))
        self.steps = WINDOW_TEXTS if self.windowed else STEPS
        self.failed, self.created, self.retry_settings = False, False, False
        self.seen, self.row = [], None
        self.change.setVisible(False)
        self.usage.setText("")
        self.show_state("create")
        self.tasks.spawn(self._create(params), name=f"create {self.name}")

    async def _create(self, params: dict[str, Any]) -> None:
        try:
            create = self.facade.window_create if self.windowed else self.facade.rented_create
            self.row = await create(params)
        except PairwiseError as exc:
            title, message = error_text(exc)
            self.fail(message if message.lower().startswith(title.lower()) else f"{title}: {message}",
                      recoverable=True)
            return
        self.created = True
        self.poll()
        self._poll.start()

    def poll(self) -> None:
        row = self.facade.rented_row(self.name or "")
        if row is None:
            return
        self.row = row
        hf_state = row["provider_state"] or "pending"
        if self.windowed:
            if hf_state not in WINDOW_STEPS:
                lines = "<br>".join(row.get("last_log_lines") or [])
                self.fail(f"the batch window ended: {row['provider_message'] or hf_state}"
                          + (f"<br><tt>{lines}</tt>" if lines else ""))
                return
            hf_state = WINDOW_STEPS[hf_state]
        if hf_state in ("failed", "updateFailed"):
            self.fail(f"Hugging Face reports {hf_state}: {row['provider_message'] or 'no message'}")
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
        row = self.row
        cost = row["cost"]["session_usd"] if row is not None else None
        price = row["price_per_hour"] if row is not None else None
        message = (row["provider_message"] if row is not None else None) or ""
        if hf_state == "running":
            self._poll.stop()
            ends_at = row.get("window_ends_at") if row is not None else None
            done = (f"Hugging Face ends the window by {ends_at}." if self.windowed
                    else "Pause it from the tray menu when you are done.")
            self.detail.setText(f"{self.name} is running at {fmt.price(price)}. Cost so far: {fmt.money(cost)}. "
                                + done)
            model = ((row["models"] if row is not None else []) or [""])[0]
            listen = self.facade.status().get("listen") or "127.0.0.1:11434"
            self.usage.setText(f"<b>Use it from any app</b> on this machine: OpenAI base URL "
                               f"<code>http://{listen}/v1</code>, Ollama URL <code>http://{listen}</code>, "
                               f"model <code>{model}</code>. The node's page in the Pairwise window has a "
                               "curl line and Python to copy.")
        elif hf_state not in ORDER:
            self.detail.setText(f"Hugging Face says: {hf_state}. {message}")
        elif hf_state != "create":
            self.detail.setText(f"Hugging Face says: {hf_state}. {message}")
        self.completeChanged.emit()

    def fail(self, message: str, *, recoverable: bool = False) -> None:
        """``recoverable``: nothing was created (so nothing bills); every choice is kept for another try."""
        self._poll.stop()
        self.failed = True
        nothing = " Nothing was created, so nothing is billed." if recoverable else ""
        self.detail.setText(f"<b>Not started.</b> {message}{nothing}")
        for label in self.labels:
            label.setText(label.text().replace("▶", "✖"))
        self.change.setVisible(recoverable)
        self.completeChanged.emit()

    def back_to_settings(self) -> None:
        """Back past the commit page: the settings page, with every choice as it was."""
        self.retry_settings = True
        self.wizard().next()

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return self.failed or self.state == "running"

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        if self.retry_settings:
            return int(HfPage.SETTINGS)
        return -1  # the last page of the rent path: Finish

    def billing_started(self) -> bool:
        """Created on Hugging Face and not failed: closing the wizard now leaves it starting and billing."""
        return self.created and not self.failed

    def cleanupPage(self) -> None:  # noqa: N802 - Qt's name
        self._poll.stop()
