"""The wizard's first page: rent a new GPU on one of the providers that offer it, or attach an
endpoint the user already has."""

from __future__ import annotations

from PySide6.QtWidgets import QRadioButton, QVBoxLayout, QWizardPage

from app.ui.providers import TrayProvider
from app.ui.sizing import scrolling
from app.ui.wizard.state import Page


class IntroPage(QWizardPage):
    def __init__(self, renting: list[tuple[TrayProvider, int]]) -> None:
        """``renting``: each provider that offers to rent, with the id of its first page."""
        super().__init__()
        self.setTitle("Add a rented GPU")
        self.setSubTitle("A rented GPU joins your cluster as a node. Prompts it serves leave your LAN, "
                         "and it costs money by the hour while it runs.")
        layout = scrolling(self, QVBoxLayout)
        self.rents: dict[str, tuple[QRadioButton, int]] = {}
        for provider, first_id in renting:
            if provider.rent is None:
                continue
            button = QRadioButton(provider.rent.label)
            self.rents[provider.key] = (button, first_id)
            layout.addWidget(button)
        self.attach = QRadioButton("Attach an endpoint I already have (URL, token, provider)")
        (next(iter(self.rents.values()))[0] if self.rents else self.attach).setChecked(True)
        layout.addWidget(self.attach)
        layout.addStretch(1)

    def rent_button(self, key: str) -> QRadioButton:
        return self.rents[key][0]

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        return next((first for button, first in self.rents.values() if button.isChecked()), int(Page.ATTACH))
