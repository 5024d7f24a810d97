"""The rented node's settings, with a live cost preview, then the confirmation that billing
starts now. Next on the settings page asks the node for the creation plan (price, what the
budget allows), so the confirmation shows what Hugging Face will actually be asked for."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWizard,
    QWizardPage,
)

from app.services.api import glossary
from app.services.api.plans import EndpointPlan, WindowPlan
from app.ui import fmt
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.hf.wizard.cost import cost_preview
from app.ui.hf.wizard.state import WizardState, state_of, state_or_none
from app.ui.hf.wizard.window import flavor_of, window_preview
from app.ui.sizing import scrolling
from app.ui.wizard.base import AsyncPage
from app.ui.wizard.policies import POLICIES

HF_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")

def default_name(repo_id: str) -> str:
    """"HuggingFaceTB/SmolLM2-1.7B-Instruct" → "smollm2-1-7b-instruct" (a valid HF endpoint name)."""
    base = repo_id.rsplit("/", 1)[-1].lower()
    base = re.sub(r"[^a-z0-9]+", "-", base).strip("-")[:32].strip("-")
    return base or "rented-gpu"


def _money_spin(maximum: float, suffix: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0, maximum)
    box.setDecimals(2)
    box.setPrefix("$")
    box.setSuffix(suffix)
    box.setSpecialValueText("no cap")
    return box


class SettingsPage(AsyncPage):
    rent_state: WizardState | None = None

    def __init__(self, facade: NodeFacade, tasks: Tasks) -> None:
        super().__init__(tasks)
        self.facade = facade
        self.setTitle("Settings for the rented GPU")
        self.setSubTitle("How your cluster may use it, and what it may cost.")
        self.form = form = scrolling(self, QFormLayout)
        self.name = QLineEdit()
        self.name.setObjectName("nodeName")
        self.share = QCheckBox("Share with the cluster (other machines may send prompts to it)")
        self.policy = QComboBox()
        for value, text in POLICIES:
            self.policy.addItem(text, value)
        self.idle = QDoubleSpinBox()
        self.idle.setRange(0, 24 * 60)
        self.idle.setDecimals(1)
        self.idle.setSuffix(" min without requests")
        self.idle.setSpecialValueText("never")
        self.idle.setValue(15)
        self.day = _money_spin(100_000, "/day")
        self.day.setValue(10)
        self.month = _money_spin(1_000_000, "/month")
        self.month.setValue(100)
        self.wake = QCheckBox("Wake it when a request needs it (the request waits for the cold start)")
        self.wake.setChecked(True)
        self.pause_on_exit = QCheckBox("Pause it when Pairwise quits")
        self.pause_on_exit.setChecked(True)
        self.hours = QDoubleSpinBox()
        self.hours.setRange(0.25, 24 * 31)
        self.hours.setDecimals(2)
        self.hours.setValue(2)
        self.hours.setSuffix(" h a day")
        self.preview = QLabel("")
        self.preview.setObjectName("costPreview")
        self.preview.setWordWrap(True)
        self.preview.setStyleSheet("font-weight: bold")
        form.addRow("Name", self.name)
        form.addRow(self.share)
        form.addRow("Use it", self.policy)
        form.addRow("Pause after", self.idle)
        form.addRow("Daily budget (UTC day)", self.day)
        form.addRow("Monthly budget (UTC month)", self.month)
        form.addRow(self.wake)
        form.addRow(self.pause_on_exit)
        form.addRow("Expected use", self.hours)
        self.hours.setToolTip("Hours a day you expect it to run (initializing and running are billed); "
                              "only for the preview below")
        form.addRow("Cost", self.preview)
        form.addRow(self.status)
        for box in (self.idle, self.day, self.month, self.hours):
            box.valueChanged.connect(self.update_preview)
        self.name.textChanged.connect(lambda _t: self.completeChanged.emit())
        self.plan: EndpointPlan | None = None
        self.window_plan: WindowPlan | None = None

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        wizard = state_of(self)
        if not self.name.text() or self.name.text() == getattr(self, "_defaulted", ""):
            self._defaulted = default_name(wizard.choice.model or "")
            self.name.setText(self._defaulted)
        self.status.setText("")
        self._show_kind(bool(wizard.choice.window))
        self.update_preview()

    def _show_kind(self, window: bool) -> None:
        """A batch window cannot pause or wake: idle stop and exit cancel it; `prefer` is its natural policy."""
        if window != getattr(self, "_window_mode", False):
            self._window_mode = window
            self.policy.setCurrentIndex(self.policy.findData("prefer" if window else "when-no-local-node"))
        label = self.form.labelForField(self.idle)
        if isinstance(label, QLabel):
            label.setText("Cancel after" if window else "Pause after")
        self.pause_on_exit.setText("Cancel it when Pairwise quits" if window else "Pause it when Pairwise quits")
        self.form.setRowVisible(self.wake, not window)
        self.form.setRowVisible(self.hours, not window)

    def price(self) -> float | None:
        wizard = state_or_none(self)
        hardware = wizard.choice.hardware if wizard else None
        return hardware["pricePerHour"] if hardware else None

    def update_preview(self) -> None:
        wizard = state_or_none(self)
        window = wizard.choice.window if wizard else None
        if wizard and window:
            flavor = flavor_of(wizard.choice.hardware)
            hours = int(window.rstrip("m")) / 60
            caps = [f"your {fmt.money(cap)}/{period} cap pays for {fmt.hours(cap / flavor['window_price_per_hour'])}"
                    for period, cap in (("day", self.day.value()), ("month", self.month.value()))
                    if cap and flavor and flavor.get("window_price_per_hour")]
            self.preview.setText(" ".join([window_preview(flavor, hours), "; ".join(caps)]).strip())
            return
        self.preview.setText(cost_preview(self.price(), self.hours.value(), usd_per_day=self.day.value() or None,
                                          usd_per_month=self.month.value() or None,
                                          idle_pause_min=self.idle.value() or None))

    def ready(self) -> bool:
        return bool(HF_NAME.match(self.name.text().strip()))

    def params(self) -> dict[str, Any]:
        wizard = state_of(self)
        hardware = wizard.choice.hardware
        # The new node's settings, nested as its declaration nests them (and as `rented set` changes them).
        settings: dict[str, Any] = {
            "share_with_cluster": self.share.isChecked(), "routing": {"use": self.policy.currentData()},
            "budget": {"usd_per_day": self.day.value() or None, "usd_per_month": self.month.value() or None},
            "lifecycle": {"idle_pause_min": self.idle.value() or None,
                          "pause_on_sponsor_exit": self.pause_on_exit.isChecked()},
        }
        if wizard.choice.window:
            return {
                "name": self.name.text().strip(), "model": wizard.choice.model, "namespace": wizard.choice.namespace,
                "gpu": hardware["id"] if hardware else None, "window": wizard.choice.window, **settings,
            }
        settings["lifecycle"]["wake_on_request"] = self.wake.isChecked()
        return {
            "name": self.name.text().strip(), "model": wizard.choice.model, "namespace": wizard.choice.namespace,
            "gpu": (hardware["id"] or f"{hardware['instanceType']}:{hardware['instanceSize']}") if hardware else None,
            "vendor": hardware["vendor"] if hardware else None, "region": hardware["region"] if hardware else None,
            **settings, "context_window": wizard.choice.context_window, "same_as": list(wizard.choice.same_as),
        }

    def busy_text(self) -> str:
        return "Checking the name, your quota and the price with Hugging Face (nothing is billed yet)…"

    def show_error(self, title: str, message: str) -> None:
        # In words a user can act on, with the way on: the settings stay as they are.
        hint = ""
        lowered = message.lower()
        if "already exists" in lowered:
            hint = "Change the name above and press Next again."
            self.name.setFocus()
            self.name.selectAll()
        elif "quota" in lowered or "cannot be rented" in lowered or "offers no" in lowered:
            hint = "Press Back to pick another GPU or region."
        text = message if message.lower().startswith(title.lower()) else f"{title}: {message}"
        self.status.setText(f"<b>Not created — nothing is billed.</b> {text} {hint}".strip())

    async def run_next(self) -> None:
        params = self.params()
        windowed = bool(params.get("window"))
        if windowed:
            self.plan, self.window_plan = None, await self.facade.window_plan(params)
        else:
            self.plan, self.window_plan = await self.facade.rented_plan(params), None
        wizard = state_of(self)
        wizard.choice.params, wizard.choice.plan, wizard.choice.window_plan = params, self.plan, self.window_plan


class ConfirmPage(QWizardPage):
    rent_state: WizardState | None = None

    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Billing starts now")
        self.setCommitPage(True)
        self.setButtonText(QWizard.WizardButton.CommitButton, "Create — billing starts now")
        layout = scrolling(self, QVBoxLayout)
        self.summary = QLabel("")
        self.summary.setObjectName("confirmSummary")
        self.summary.setWordWrap(True)
        self.agree = QCheckBox("I understand that Hugging Face bills my account from now on")
        self.agree.setObjectName("agreeBilling")
        self.agree.toggled.connect(lambda _on: self.completeChanged.emit())
        layout.addWidget(self.summary)
        layout.addWidget(self.agree)
        layout.addStretch(1)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        wizard = state_of(self)
        plan, params = wizard.choice.plan, wizard.choice.params or {}
        self.agree.setChecked(False)
        if wizard.choice.window_plan is not None:
            self.summary.setText("<br><br>".join(window_summary(wizard.choice.window_plan)))
            return
        if plan is None:
            return
        budget = plan["budget"]
        caps = []
        if budget.get("usd_per_day") is not None:
            caps.append(f"{glossary.cap(budget['usd_per_day'], 'day')} "
                        f"(about {fmt.hours(budget.get('hours_per_day') or 0)} a day)")
        if budget.get("usd_per_month") is not None:
            caps.append(f"{glossary.cap(budget['usd_per_month'], 'month')} "
                        f"(about {fmt.hours(budget.get('hours_per_month') or 0)} a month)")
        idle = (params.get("lifecycle") or {}).get("idle_pause_min")
        lines = [
            f"<b>{plan.get('name')}</b>: {plan.get('model')} on {plan.get('gpu')} "
            f"({plan.get('vendor')} {plan.get('region')}) in {plan.get('namespace')}.",
            f"<b>{glossary.per_hour(plan.get('price_per_hour'))}</b>, billed per minute while it initializes and runs, "
            "from the moment you click Create.",
            "Budget: " + (", ".join(caps) if caps else "no cap") + " — days and months are UTC.",
            f"Idle pause after {idle:g} min." if idle else "No idle pause: it bills until you pause it.",
            f"Hugging Face scales it to zero after {plan.get('scale_to_zero_timeout_min')} min without requests, "
            "as a backstop if this machine is off.",
            f"The endpoint is {plan.get('type')} (never public): only your token can call it.",
        ]
        if plan.get("context_window"):
            lines.insert(1, f"Context window: <b>{plan['context_window']:,} tokens</b> a request.")
        if plan.get("same_as"):
            lines.insert(2, f"Linked as one model with {', '.join(plan['same_as'])}: requests their window cannot "
                            "hold go to it.")
        self.summary.setText("<br><br>".join(lines))
        self.agree.setChecked(False)

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return self.agree.isChecked()


def window_summary(plan: WindowPlan) -> list[str]:
    """The confirmation of a batch window: its whole cost, its hard stop, and that stops CANCEL it."""
    budget = plan["budget"]
    caps = [f"{fmt.money(cap)} per UTC {period}" for period, cap in (("day", budget["usd_per_day"]),
                                                                     ("month", budget["usd_per_month"]))
            if cap is not None]
    idle = plan.get("idle_stop_min")
    return [
        f"<b>{plan.get('name')}</b>: {plan.get('model')} served by {plan.get('engine')} on {plan.get('gpu')} "
        f"({plan.get('gpu_description')}) in {plan.get('namespace')}, a batch window of {plan.get('window')}.",
        f"<b>{fmt.money(plan.get('window_cost_usd'))} for the whole window</b>: {plan.get('window_minutes')} min at "
        f"{fmt.price(plan.get('price_per_hour'))} (GPU {fmt.price(plan.get('hardware_per_hour'))} + "
        "$0.01/h for the port), billed per minute from when the job starts.",
        f"Hugging Face stops it after {plan.get('window')}, even if this machine is off. It cannot be extended.",
        "Budget: " + (", ".join(caps) if caps else "no cap") + ".",
        (f"Idle stop after {idle:g} min without requests. " if idle else "")
        + "Idle stop, budget caps and quitting Pairwise <b>cancel</b> the job: a later batch starts a new window "
        "and loads the model again.",
        f"Its port is {plan.get('access')}: only your token can call it.",
    ]
