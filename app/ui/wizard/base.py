"""``AsyncPage``: a wizard page whose Next runs a coroutine first (check a token, attach an
endpoint, plan a creation). Next is refused while it runs; on success the wizard moves on by
itself; on failure the page shows the error's title and message and stays."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWizardPage

from app.services.errors import PairwiseError
from app.ui.aio import Tasks, error_text


class AsyncPage(QWizardPage):
    def __init__(self, tasks: Tasks) -> None:
        super().__init__()
        self.tasks = tasks
        self.busy = False
        self._passed = False
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setObjectName("pageStatus")

    async def run_next(self) -> None:
        """Raise (a PairwiseError, ideally) to stay on the page."""

    def busy_text(self) -> str:
        return "Working…"

    def validatePage(self) -> bool:  # noqa: N802 - Qt's name
        if self._passed:
            self._passed = False
            return True
        if not self.busy:
            self.busy = True
            self.status.setText(self.busy_text())
            self.completeChanged.emit()
            self.tasks.spawn(self._go(), name=f"wizard {type(self).__name__}")
        return False

    async def _go(self) -> None:
        try:
            await self.run_next()
        except PairwiseError as exc:
            title, message = error_text(exc)
            self.show_error(title, message)
            return
        finally:
            self.busy = False
            self.completeChanged.emit()
        self._passed = True
        wizard = self.wizard()
        if self.nextId() == -1:
            wizard.accept()  # the last page: its Finish ran the coroutine
        else:
            wizard.next()

    def show_error(self, title: str, message: str) -> None:
        self.status.setText(f"<b>{title}</b><br>{message}")

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return not self.busy and self.ready()

    def ready(self) -> bool:
        return True
