"""The second path: attach an endpoint the user already has: its URL (or what its provider takes
instead, such as NAMESPACE/NAME), its token and its provider (the registered providers' choices,
``app/ui/providers.py``). The node checks the URL rules and probes the endpoint before anything is
stored; the token goes to the keyring."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWizardPage,
)

from app.services.api.rows import RentedActionRow
from app.ui import fmt
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.providers import AttachChoice, registered
from app.ui.sizing import scrolling
from app.ui.wizard.base import AsyncPage
from app.ui.wizard.policies import POLICIES

ANY_ENDPOINT = AttachChoice("openai-compatible", "Any OpenAI-compatible HTTPS endpoint")
URL_EXAMPLE = "https://host.example/v1"


def attach_choices() -> list[AttachChoice]:
    """Any OpenAI-compatible endpoint first, then each registered provider's own."""
    return [ANY_ENDPOINT, *(choice for provider in registered() for choice in provider.attach)]


def choice_of(provider: str) -> AttachChoice:
    return next((c for c in attach_choices() if c.provider == provider), ANY_ENDPOINT)


def declaration(*, name: str, provider: str, where: str, models: str, gpu: str, price: float, share: bool,
                use: str, managed: bool) -> dict[str, Any]:
    decl: dict[str, Any] = {"name": name, "provider": provider, "share_with_cluster": share, "routing": {"use": use}}
    declare = choice_of(provider).declare
    if declare is None or not declare(where, managed, decl):
        decl["url"] = where
    names = [m.strip() for m in models.split(",") if m.strip()]
    if names:
        decl["models"] = names
    if gpu:
        decl["gpu"] = gpu
    if price:
        decl["price_per_hour"] = price
    return decl


class AttachPage(AsyncPage):
    def __init__(self, facade: NodeFacade, tasks: Tasks) -> None:
        super().__init__(tasks)
        self.facade = facade
        self.setTitle("Attach an endpoint")
        self.setSubTitle("HTTPS only (http:// only to this machine). The token is checked against the endpoint "
                         "and kept in your system's keyring.")
        form = scrolling(self, QFormLayout)
        self.name = QLineEdit()
        self.name.setObjectName("attachName")
        self.provider = QComboBox()
        self.provider.setObjectName("attachProvider")
        choices = attach_choices()
        for choice in choices:
            self.provider.addItem(choice.label, choice.provider)
        self.url = QLineEdit()
        self.url.setObjectName("attachUrl")
        self.url.setPlaceholderText(next((c.placeholder for c in choices if c.placeholder), URL_EXAMPLE))
        self.token = QLineEdit()
        self.token.setObjectName("attachToken")
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.models = QLineEdit()
        self.models.setPlaceholderText("only if it has no /v1/models, comma-separated")
        self.gpu = QLineEdit()
        self.gpu.setPlaceholderText("e.g. 1x L40S 48 GB")
        self.price = QDoubleSpinBox()
        self.price.setRange(0, 1000)
        self.price.setPrefix("$")
        self.price.setSuffix(" per hour")
        self.price.setSpecialValueText("unknown")
        self.share = QCheckBox("Share with the cluster")
        self.policy = QComboBox()
        for value, text in POLICIES:
            self.policy.addItem(text, value)
        managed_by = [c.manages for c in choices if c.manages]
        self.managed = QCheckBox("Let Pairwise pause and resume it" + (f" ({', '.join(managed_by)})" if managed_by else ""))
        form.addRow("Name", self.name)
        form.addRow("Provider", self.provider)
        form.addRow("URL", self.url)
        form.addRow("Token", self.token)
        form.addRow("Models", self.models)
        form.addRow("GPU", self.gpu)
        form.addRow("Price", self.price)
        form.addRow(self.share)
        form.addRow("Use it", self.policy)
        form.addRow(self.managed)
        form.addRow(self.status)
        for edit in (self.name, self.url):
            edit.textChanged.connect(lambda _t: self.completeChanged.emit())
        self.result: RentedActionRow | None = None

    def ready(self) -> bool:
        return bool(self.name.text().strip() and self.url.text().strip())

    def busy_text(self) -> str:
        return "Checking the endpoint…"

    async def run_next(self) -> None:
        decl = declaration(name=self.name.text().strip(), provider=str(self.provider.currentData()),
                           where=self.url.text().strip(), models=self.models.text(), gpu=self.gpu.text().strip(),
                           price=self.price.value(), share=self.share.isChecked(),
                           use=str(self.policy.currentData()), managed=self.managed.isChecked())
        token = self.token.text().strip() or None
        self.result = await self.facade.rented_attach(decl, token)
        self.token.clear()

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        from app.ui.wizard.state import Page

        return Page.ATTACH_DONE


class AttachDonePage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Attached")
        layout = scrolling(self, QVBoxLayout)
        self.summary = QLabel("")
        self.summary.setObjectName("attachSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        layout.addStretch(1)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        wizard: Any = self.wizard()
        row = wizard.page(wizard.Page.ATTACH).result or {}
        lines = [f"<b>{row.get('name')}</b> — Rented · off-LAN, {row.get('state')}"
                 + (f" ({row.get('reason')})" if row.get("reason") else ""),
                 f"Models: {', '.join(row.get('models') or []) or 'none found yet'}",
                 f"{row.get('gpu') or 'GPU unknown'}, {fmt.price(row.get('price_per_hour'))}",
                 "Shared with the cluster." if row.get("shared") else "Only this machine's apps can use it."]
        if row.get("warning"):
            lines.append(f"⚠ {row['warning']}")
        self.summary.setText("<br>".join(lines))
