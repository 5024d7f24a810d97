"""The wizard's first pages: rent a new GPU or attach an existing endpoint; sign in to
Hugging Face with a fine-grained token, checked at once, missing permissions named."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QLineEdit, QRadioButton, QVBoxLayout, QWizardPage

from app.services.errors import RefusedError
from app.services.hf.api import HfAccount
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.sizing import scrolling
from app.ui.wizard.base import AsyncPage

MANAGE = "inference.endpoints.write"
CALL = "inference.endpoints.infer.write"
TOKEN_HELP = ("Create a fine-grained token at huggingface.co/settings/tokens with, for the namespace that pays: "
              f"<b>{MANAGE}</b> (create, pause, resume, delete endpoints) and <b>{CALL}</b> (call them). "
              "It is checked now and kept in your system's keyring, never in a file.")


class IntroPage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Add a rented GPU")
        self.setSubTitle("A rented GPU joins your cluster as a node. Prompts it serves leave your LAN, "
                         "and it costs money by the hour while it runs.")
        layout = scrolling(self, QVBoxLayout)
        self.rent = QRadioButton("Rent a GPU on Hugging Face (creates an Inference Endpoint for you)")
        self.attach = QRadioButton("Attach an endpoint I already have (URL, token, provider)")
        self.rent.setChecked(True)
        layout.addWidget(self.rent)
        layout.addWidget(self.attach)
        layout.addStretch(1)

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        from app.ui.wizard.state import Page

        return Page.SIGN_IN if self.rent.isChecked() else Page.ATTACH


def usable_namespaces(report: HfAccount) -> list[str]:
    return [n["name"] for n in report.get("namespaces") or [] if n["can_manage"] and n["can_call"]]


def missing_text(report: HfAccount) -> str:
    return "; ".join(report.get("warnings") or []) or "the token can neither create nor call endpoints"


class SignInPage(AsyncPage):
    def __init__(self, facade: NodeFacade, tasks: Tasks) -> None:
        super().__init__(tasks)
        self.facade = facade
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
        self.signed_in = signed_in = self.facade.hf_signed_in()
        self.current.setText("Signed in already: Next checks the stored token again, or paste another one."
                             if signed_in else "Paste a fine-grained token:")
        self.status.setText("")

    def busy_text(self) -> str:
        return "Checking the token with Hugging Face…"

    def ready(self) -> bool:
        return bool(self.token.text().strip()) or self.signed_in

    async def run_next(self) -> None:
        token = self.token.text().strip()
        report = await (self.facade.hf_login(token) if token else self.facade.hf_status())
        self.token.clear()  # the keyring has it now; the widget forgets it
        self.report = report
        namespaces = usable_namespaces(report)
        wizard = self.rent_wizard()
        wizard.choice.namespaces = namespaces
        if not wizard.sign_in_only and not namespaces:
            raise RefusedError(f"signed in as {report.get('user')}, but this token cannot rent a GPU: "
                               f"{missing_text(report)}", title="The token lacks a permission")
        note = f"Signed in as {report.get('user')}."
        if report.get("warnings"):
            note += " Note: " + missing_text(report)
        self.status.setText(note)

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        from app.ui.wizard.state import Page

        return -1 if self.rent_wizard().sign_in_only else Page.MODEL
