"""Settings → Hugging Face account: who the stored token signs in as, what it may do in each
namespace, Sign in (the wizard's sign-in page alone) and Sign out."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton

from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.hf.facade import HfFacade
from app.ui.providers import AccountBox


class HfAccountBox(AccountBox):
    def __init__(self, facade: NodeFacade, tasks: Tasks, sign_in: Callable[[], None]) -> None:
        super().__init__("Hugging Face account")
        self.hf, self.tasks = HfFacade(facade.api), tasks
        form = QFormLayout(self)
        self.status = QLabel("…")
        self.status.setObjectName("hfStatus")
        self.status.setWordWrap(True)
        buttons = QHBoxLayout()
        self.sign_in_button = QPushButton("Sign in…")
        self.sign_out_button = QPushButton("Sign out")
        self.sign_in_button.clicked.connect(lambda _checked=False: sign_in())
        self.sign_out_button.clicked.connect(self.sign_out)
        buttons.addWidget(self.sign_in_button)
        buttons.addWidget(self.sign_out_button)
        buttons.addStretch(1)
        form.addRow(self.status)
        form.addRow(buttons)

    def refresh(self) -> None:
        self.tasks.spawn(self._refresh(), name="hf status", on_error=lambda t, m: self.status.setText(f"{t}: {m}"))

    async def _refresh(self) -> None:
        if not self.hf.available():
            self.status.setText("The Hugging Face adapter is not part of this build.")
            self.sign_in_button.setEnabled(False)
            self.sign_out_button.setEnabled(False)
            return
        if not self.hf.signed_in():
            self.status.setText("Not signed in. Sign in with a fine-grained token to rent GPUs.")
            self.sign_out_button.setEnabled(False)
            return
        status = await self.hf.status()
        spaces = "; ".join(f"{n['name']}: {'manage' if n['can_manage'] else 'no manage'}, "
                           f"{'call' if n['can_call'] else 'no call'}" for n in status.get("namespaces") or [])
        text = f"Signed in as {status.get('user')} (token {status.get('token_name') or status.get('role')}). {spaces}"
        for warning in status.get("warnings") or []:
            text += f"\n⚠ {warning}"
        self.status.setText(text)
        self.sign_out_button.setEnabled(True)

    def sign_out(self) -> None:
        async def run() -> None:
            await self.hf.logout()
            self.refresh()

        self.tasks.spawn(run(), name="hf logout")
