"""Hugging Face's first page of Add rented GPU: sign in with a fine-grained token, checked at once,
missing permissions named. Alone, it is Settings → Hugging Face account → Sign in."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QLineEdit, QVBoxLayout

from app.services.errors import RefusedError
from app.services.hf.api import HfAccount
from app.ui.aio import Tasks
from app.ui.hf.facade import HfFacade
from app.ui.hf.wizard.state import HfPage, WizardState, state_of
from app.ui.sizing import scrolling
from app.ui.wizard.base import AsyncPage

MANAGE = "inference.endpoints.write"
CALL = "inference.endpoints.infer.write"
TOKEN_HELP = ("Create a fine-grained token at huggingface.co/settings/tokens with, for the namespace that pays: "
              f"<b>{MANAGE}</b> (create, pause, resume, delete endpoints) and <b>{CALL}</b> (call them). "
              "It is checked now and kept in your system's keyring, never in a file.")


def usable_namespaces(report: HfAccount) -> list[str]:
    return [n["name"] for n in report.get("namespaces") or [] if n["can_manage"] and n["can_call"]]


def missing_text(report: HfAccount) -> str:
    return "; ".join(report.get("warnings") or []) or "the token can neither create nor call endpoints"


class SignInPage(AsyncPage):
    rent_state: WizardState | None = None

    def __init__(self, hf: HfFacade, tasks: Tasks) -> None:
        super().__init__(tasks)
        self.hf = hf
        self.setTitle("Sign in to Hugging Face")
        self.setSubTitle("Pairwise rents the GPU with your account; Hugging Face bills that account.")
        layout = scrolling(self, QVBoxLayout)
        self.current = QLabel("")
        self.current.setWordWrap(True)
        help_text = QLabel(TOKEN_HELP)
        help_text.setWordWrap(True)
        self.token = QLineEdit()
        self.token.setObjectName("hfToken")
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("hf_…")
        self.token.textChanged.connect(lambda _t: self.completeChanged.emit())
        for widget in (self.current, help_text, self.token, self.status):
            layout.addWidget(widget)
        layout.addStretch(1)
        self.report: HfAccount | None = None
        self.signed_in = False  # read once per visit: it may ask the keyring, which can be slow

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        self.signed_in = signed_in = self.hf.signed_in()
        self.current.setText("Signed in already: Next checks the stored token again, or paste another one."
                             if signed_in else "Paste a fine-grained token:")
        self.status.setText("")

    def busy_text(self) -> str:
        return "Checking the token with Hugging Face…"

    def ready(self) -> bool:
        return bool(self.token.text().strip()) or self.signed_in

    async def run_next(self) -> None:
        token = self.token.text().strip()
        report = await (self.hf.login(token) if token else self.hf.status())
        self.token.clear()  # the keyring has it now; the widget forgets it
        self.report = report
        namespaces = usable_namespaces(report)
        wizard = state_of(self)
        wizard.choice.namespaces = namespaces
        if not wizard.sign_in_only and not namespaces:
            raise RefusedError(f"signed in as {report.get('user')}, but this token cannot rent a GPU: "
                               f"{missing_text(report)}", title="The token lacks a permission")
        note = f"Signed in as {report.get('user')}."
        if report.get("warnings"):
            note += " Note: " + missing_text(report)
        self.status.setText(note)

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        return -1 if state_of(self).sign_in_only else HfPage.MODEL
