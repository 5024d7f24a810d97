"""The GPU step's first question: an Endpoint or a Batch window, the difference in one line each, and
for a window its length with the cost of the whole window (GPU per minute + the port's $0.01/h)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QDoubleSpinBox, QFormLayout, QLabel, QRadioButton, QWidget

from app.services.api.plans import WindowFlavor
from app.services.hf.api import HardwareOffer
from app.ui import fmt
from app.ui.palette import muted

ENDPOINT, WINDOW = "endpoint", "window"
KINDS = [
    (ENDPOINT, "Endpoint (pause and resume, scales to zero)",
     "Bills while it runs; pauses when idle or at a cap and wakes on the next request."),
    (WINDOW, "Batch window (fixed time, hard stop)",
     "Bills for at most the window: Hugging Face stops it at the end even if this machine is off; "
     "idle stop and caps cancel it."),
]


def window_preview(flavor: WindowFlavor | None, hours: float) -> str:
    """"2 h window on l4x1: $1.62 ($0.80/h GPU + $0.01/h port), billed per minute; HF stops it at the end"."""
    if flavor is None:
        return "Choose a GPU to see what the whole window costs."
    price = float(flavor["window_price_per_hour"])
    minutes = max(1, round(hours * 60))
    return (f"{fmt.hours(hours)} window on {flavor['name']}: {fmt.money(minutes * price / 60)} "
            f"({fmt.price(flavor['price_per_hour'])} GPU + $0.01/h port), billed per minute; "
            "Hugging Face stops it at the end.")


class FlavorOffer(HardwareOffer):
    """A Jobs flavor as a row of the GPU table, with the flavor itself for the window's preview."""

    flavor: WindowFlavor  # as the rented API lists it (``window_flavors``)


def flavor_row(flavor: WindowFlavor) -> FlavorOffer:
    """A Jobs flavor as a row of the GPU table (the endpoint rows' keys where they apply)."""
    return {"id": flavor["name"], "instanceType": flavor["name"], "instanceSize": flavor.get("gpu") or "",
            "pricePerHour": flavor["window_price_per_hour"], "vendor": "Hugging Face", "region": "Jobs",
            "regionLabel": "Jobs", "accelerator": "gpu", "numAccelerators": 1, "architecture": "",
            "gpuMemoryGb": None, "memoryGb": None, "numCpus": None, "status": "available", "quotaMax": None,
            "quotaUsed": None, "quotaFree": None, "unavailable_reason": None, "flavor": flavor}


def flavor_of(row: HardwareOffer | None) -> WindowFlavor | None:
    """The Jobs flavor behind a GPU row (None for an endpoint's hardware)."""
    seen: Mapping[str, object] = row if row is not None else {}
    flavor = seen.get("flavor")  # only a FlavorOffer carries one, made by ``flavor_row``
    return cast("WindowFlavor", flavor) if isinstance(flavor, dict) else None


class KindChoice(QWidget):
    """Endpoint or Batch window, and the window's length with its cost preview."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.group = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        for kind, title, line in KINDS:
            button = QRadioButton(title)
            button.setObjectName(f"kind-{kind}")
            self.group.addButton(button)
            self.buttons[kind] = button
            note = QLabel(line)
            note.setWordWrap(True)
            note.setStyleSheet(f"color: {muted(note.palette()).name()}")
            form.addRow(button)
            form.addRow(note)
        self.buttons[ENDPOINT].setChecked(True)
        self.hours = QDoubleSpinBox()
        self.hours.setObjectName("windowHours")
        self.hours.setRange(0.25, 24 * 7)
        self.hours.setDecimals(2)
        self.hours.setValue(2)
        self.hours.setSuffix(" h")
        self.preview = QLabel("")
        self.preview.setObjectName("windowPreview")
        self.preview.setWordWrap(True)
        self.preview.setStyleSheet("font-weight: bold")
        self.hours_label = QLabel("Window")
        form.addRow(self.hours_label, self.hours)
        form.addRow(self.preview)
        self.group.buttonToggled.connect(lambda _b, on: self._toggled() if on else None)
        self.hours.valueChanged.connect(lambda _v: self.changed.emit())
        self._toggled()

    @property
    def kind(self) -> str:
        return WINDOW if self.buttons[WINDOW].isChecked() else ENDPOINT

    def window_text(self) -> str:
        return f"{max(1, round(self.hours.value() * 60))}m"

    def _toggled(self) -> None:
        batch = self.kind == WINDOW
        for widget in (self.hours_label, self.hours, self.preview):
            widget.setVisible(batch)
        self.changed.emit()
