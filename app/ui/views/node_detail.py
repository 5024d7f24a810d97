"""One node in detail. A rented node shows its state and its provider's own message, session,
day and month cost (today's split by requester), its budget, idle and per-peer limits (editable),
and Pause, Resume and Delete; a LAN node shows its machine, engines and models."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.services.api import glossary
from app.services.api.keys import peer_text, today_text
from app.services.api.rows import (
    LocalNodeRow,
    PeerNodeRow,
    RentedActionRow,
    is_rented,
)
from app.services.errors import PairwiseError
from app.ui import fmt, providers
from app.ui.aio import Tasks
from app.ui.dialogs import confirm
from app.ui.facade import NodeFacade
from app.ui.tray_model import stop_tip
from app.ui.usage import usage_snippets
from app.ui.views import budget_edit
from app.ui.views.budget_edit import Change, Fields

LAST_LINES_SHOWN = 12


def _spin(maximum: float, suffix: str, decimals: int = 2, prefix: str = "", none: str = "no cap") -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0, maximum)
    box.setDecimals(decimals)
    box.setPrefix(prefix)
    box.setSuffix(suffix)
    box.setSpecialValueText(none)  # 0 means "no cap" / "off"
    return box


def is_window(row: Mapping[str, Any]) -> bool:
    """A fixed window (its provider stops it, never pauses it): removing it cancels it, nothing to delete."""
    capabilities = row.get("capabilities") or ()
    return "stop" in capabilities and "pause" not in capabilities


def what_delete_loses(row: RentedActionRow) -> str:
    name = row["name"]
    models = ", ".join(row["models"]) or "its models"
    where_it_runs = providers.display_name(row["provider"])
    if is_window(row):
        return (f"Pairwise cancels {name}'s batch window on {where_it_runs} if it is still running (billing stops) and "
                f"forgets the node; {models} leave your cluster. Jobs history and costs stay.")
    if row["lifecycle"]["managed"]:
        where = row["endpoint"] or "the endpoint"
        return (f"This deletes the {where_it_runs} endpoint {where} for good: its configuration and its URL cannot "
                f"be recovered, and {models} leave your cluster. Billing for it stops. Jobs history and costs stay.")
    return (f"Pairwise forgets {name} and removes its token from the keyring; {models} leave your cluster. "
            f"The endpoint itself is not deleted: it keeps running at {row['provider']} (and billing, if it "
            "does) until you stop it there.")


class NodeDetail(QWidget):
    changed = Signal()

    def __init__(self, facade: NodeFacade, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks = facade, tasks
        self.setObjectName("nodeDetail")
        self.name: str | None = None
        self.row: Mapping[str, Any] = {}  # the node shown: any kind, a peer's as it sent it
        self.own: RentedActionRow | None = None  # the node shown when this node sponsors it
        self.pending: tuple[str, str] | None = None  # (verb, name) until the state it promised shows
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)  # long errors wrap and scroll down instead of being clipped
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # wrap to the pane's width
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        content = QWidget()
        scroll.setWidget(content)
        outer.addWidget(scroll)
        layout = QVBoxLayout(content)
        self.title = QLabel("Select a node")
        self.title.setObjectName("detailTitle")
        title_font = self.title.font()
        title_font.setBold(True)
        title_font.setPointSizeF(title_font.pointSizeF() * 1.3)
        self.title.setFont(title_font)
        self.title.setWordWrap(True)
        self.subtitle = QLabel("")
        self.subtitle.setWordWrap(True)
        layout.addWidget(self.title)
        layout.addWidget(self.subtitle)
        # One wrapping label per fact ("<b>Budget:</b> …"): a form layout's two columns cut wrapped values
        # short inside a scroll area (the Budget, Cap and Last error rows at scale 2); a column of labels
        # gives each the height it needs at the pane's width.
        self.facts = QVBoxLayout()
        self.facts.setSpacing(2)
        self.fact_values: dict[str, str] = {}
        facts_box = QGroupBox("State")
        facts_box.setLayout(self.facts)
        layout.addWidget(facts_box)

        self.settings_box = QGroupBox("Budget and idle pause")
        form = QFormLayout(self.settings_box)
        self.day_cap = _spin(100_000, "/day (UTC)", prefix="$")
        self.day_cap.setObjectName("dayCap")
        self.month_cap = _spin(1_000_000, "/month (UTC)", prefix="$")
        self.idle_min = _spin(10_000, " min without requests", 1, none="never")
        self.wake = QCheckBox("Wake on request")
        self.pause_on_exit = QCheckBox("Pause when Pairwise quits")
        form.addRow("Daily budget (UTC day)", self.day_cap)
        form.addRow("Monthly budget (UTC month)", self.month_cap)
        form.addRow("Pause after", self.idle_min)
        form.addRow(self.wake)
        form.addRow(self.pause_on_exit)
        self.peer_usd = QLineEdit()
        self.peer_usd.setObjectName("peerUsdPerDay")
        self.peer_usd.setPlaceholderText("laptop-b=2, *=5  (peer name or id; * for the rest)")
        self.peer_rate = QLineEdit()
        self.peer_rate.setObjectName("peerRequestsPerMin")
        self.peer_rate.setPlaceholderText("*=30")
        form.addRow("Per-peer $/day", self.peer_usd)
        form.addRow("Per-peer requests/min", self.peer_rate)
        self.preview = QLabel("")
        self.preview.setObjectName("settingsPreview")
        self.preview.setWordWrap(True)
        self.preview.setVisible(False)
        form.addRow(self.preview)
        self.apply_button = QPushButton("Apply")
        self.apply_button.clicked.connect(self.apply_settings)
        form.addRow(self.apply_button)
        self._loaded: RentedActionRow | None = None  # the row the fields were last loaded from
        self._loading = False
        for box in (self.day_cap, self.month_cap, self.idle_min):
            box.valueChanged.connect(self._update_preview)
            box.installEventFilter(self)
        for check in (self.wake, self.pause_on_exit):
            check.toggled.connect(self._update_preview)
        for line in (self.peer_usd, self.peer_rate):
            line.textChanged.connect(self._update_preview)
            line.returnPressed.connect(self.apply_settings)
        layout.addWidget(self.settings_box)

        buttons = QHBoxLayout()
        self.pause_button = QPushButton("Pause")
        self.resume_button = QPushButton("Resume")
        self.stop_button = QPushButton("Stop window")  # a batch window's one action: no pause, no resume
        self.stop_button.setToolTip(stop_tip(None))
        self.delete_button = QPushButton("Delete…")
        for button in (self.pause_button, self.resume_button, self.stop_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.pause_button.clicked.connect(lambda: self._spawn("pause"))
        self.resume_button.clicked.connect(lambda: self._spawn("resume"))
        self.stop_button.clicked.connect(lambda: self._spawn("stop"))
        self.delete_button.clicked.connect(lambda: self._spawn("delete"))
        layout.addLayout(buttons)
        self.message = QLabel("")
        self.message.setObjectName("detailMessage")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.usage_box = QGroupBox("Use it from any app")
        usage = QVBoxLayout(self.usage_box)
        self.usage = QPlainTextEdit()
        self.usage.setObjectName("usageSnippet")
        self.usage.setReadOnly(True)
        self.usage.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.usage.setMinimumHeight(self.fontMetrics().lineSpacing() * 8)
        copy = QPushButton("Copy")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.usage.toPlainText()))
        usage.addWidget(self.usage)
        usage.addWidget(copy)
        layout.addWidget(self.usage_box)
        layout.addStretch(1)
        self.show_node(None)
        self.scroller, self.content = scroll, content
        self.fit_width()

    def fit_width(self) -> None:
        """Never narrower than the widest row that cannot wrap (the budget fields): text wraps, nothing
        is cut off."""
        bar = self.scroller.verticalScrollBar().sizeHint().width()
        self.scroller.setMinimumWidth(self.content.minimumSizeHint().width() + bar + 4)

    # -- showing ---------------------------------------------------------------------------------------------

    def show_node(self, name: str | None) -> None:
        if name != self.name:
            self.message.setText("")
            self.pending = None
            self._loaded = None  # another node's fields: nothing of this one's edits carries over
        self.name = name
        self.refresh()

    def raise_budget(self) -> None:
        """The way on from a budget pause: the budget fields, focused, with what they change."""
        self.day_cap.setFocus()
        self.day_cap.selectAll()
        self.message.setText("Raise the daily or monthly budget and press Apply; the node can be resumed "
                             "once its spend is under the new cap.")

    def _fact(self, label: str, value: Any) -> None:
        value = glossary.plain(str(value))  # a service's words ("drifted", "sponsor") in the tray's
        text = QLabel(f"<b>{html.escape(label)}:</b> {html.escape(value)}")
        text.setTextFormat(Qt.TextFormat.RichText)
        text.setWordWrap(True)
        text.setObjectName(f"fact:{label}")
        self.fact_values[label] = value
        self.facts.addWidget(text)

    def fact_text(self, label: str) -> str | None:
        return self.fact_values.get(label)

    def _clear_facts(self) -> None:
        self.fact_values = {}
        while (item := self.facts.takeAt(0)) is not None:
            widget = item.widget()
            if widget is not None:
                widget.hide()  # gone from the pane now, not when the loop next deletes it
                widget.deleteLater()

    def refresh(self) -> None:
        self._clear_facts()
        rows = {n.get("name"): n for n in self.facade.nodes()}
        row = rows.get(self.name) if self.name else None
        own = self.facade.rented_row(self.name) if self.name else None
        shown: Mapping[str, Any] = own or row or {}
        self.own, self.row = own, shown
        self.settings_box.setVisible(own is not None)
        window = is_window(shown)
        for button in (self.pause_button, self.resume_button):
            button.setVisible(own is not None and not window)
        self.stop_button.setVisible(own is not None and window)
        self.delete_button.setVisible(own is not None)
        self.usage_box.setVisible(bool(shown.get("models")))
        if shown.get("models"):
            self.usage.setPlainText(usage_snippets(self.facade.status().get("listen") or "127.0.0.1:11434",
                                                   str((shown.get("models") or [""])[0])))
        if not shown:
            self.title.setText("Select a node" if not self.name else f"{self.name} is gone")
            self.subtitle.setText("")
            return
        if own is not None:
            self._show_rented(own, own=True)
            self._show_own(own)
        elif row is not None and is_rented(row):
            self._show_rented(row, own=False)
        elif row is not None:
            self._show_lan(row)
        self.fit_width()

    def _show_rented(self, row: Mapping[str, Any], *, own: bool) -> None:
        """What every rented row shows (a peer's may lack any key, so each is read with ``get``)."""
        who_rents = providers.display_name(row.get("provider"))
        simulated = f" (simulated {who_rents})" if row.get("simulated") else ""
        self.title.setText(f"{row.get('name')} — Rented · off-LAN{simulated}")
        who = "this machine" if own else str(row.get("sponsor") or "another machine")
        self.subtitle.setText(f"{row.get('gpu') or 'GPU unknown'} from {glossary.provider(row.get('provider'))}, "
                              f"{glossary.per_hour(row.get('price_per_hour'))}, rented by {who}. "
                              "Prompts served here leave your LAN.")
        self._fact("State", glossary.rented_state(row))
        if row.get("provider_message"):
            self._fact(f"{who_rents} says", row["provider_message"])
        if row.get("reason") and row.get("state") == "ineligible":
            self._fact("Why", row["reason"])
        if row.get("window_ends_at"):
            self._fact("Batch window", f"{row.get('window_stage')}; {who_rents} ends it by {row['window_ends_at']}")
        if row.get("last_log_lines"):  # a window that ended in error: why the model did not load
            lines = QLabel("\n".join(row["last_log_lines"][-LAST_LINES_SHOWN:]))
            lines.setObjectName("lastLogLines")
            lines.setStyleSheet("font-family: monospace")
            lines.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.facts.addWidget(QLabel("<b>Last log lines:</b>"))
            self.facts.addWidget(lines)
            self.fact_values["Last log lines"] = lines.text()
        for key, label in (("credential_error", "Token"), ("warning", "Warning"), ("last_error", "Last error")):
            if row.get(key):
                self._fact(label, row[key])
        self._fact("Models", ", ".join(row.get("models") or []) or "–")
        self._fact("Used", glossary.policy(row.get("policy")) + "; " +
                   ("shared with your other machines" if row.get("shared") else "only this machine uses it"))
        self._settle_pending(row)

    def _show_own(self, row: RentedActionRow) -> None:
        """What only the sponsor shows and changes: costs, endpoint, caps, lifecycle, per-peer limits."""
        cost = row["cost"]
        self._fact("Cost this session", glossary.money(cost["session_usd"]))
        self._fact("Cost today (UTC)", glossary.money(cost["day_usd"]))
        self._fact("By requester", today_text(self.facade.rented_today(row["name"])))
        self._fact("Cost this month (UTC)", glossary.money(cost["month_usd"]))
        if row["endpoint"]:
            self._fact("Endpoint", row["endpoint"])
        budget, life = row["budget"], row["lifecycle"]
        self._fact("Budget", f"{glossary.cap(budget['usd_per_day'], 'day')}, "
                             f"{glossary.cap(budget['usd_per_month'], 'month')}; days and months are UTC")
        if row["cap_note"]:
            self._fact("Cap", row["cap_note"])
        idle = life["idle_pause_min"]
        self._fact("Idle pause", f"after {idle:g} min without requests" if idle else "off")
        if self._loaded is None or self._loaded["name"] != row["name"] or not self._edited():
            self._load_fields(row)
        self._update_preview()
        managed = glossary.managed(row)
        refusal = glossary.resume_refusal(row)
        self.stop_button.setEnabled(row["stoppable"])
        self.stop_button.setToolTip(stop_tip(row))
        self.pause_button.setEnabled(glossary.pausable(row))
        self.resume_button.setEnabled(glossary.resumable(row) and refusal is None)
        self.resume_button.setToolTip(refusal or "")
        if refusal and not self.message.text():
            self.message.setText(refusal)
        self.delete_button.setText("Delete…" if managed and not is_window(row) else "Remove from Pairwise…")
        for widget in (self.idle_min, self.wake, self.pause_on_exit):
            widget.setEnabled(managed)

    def _settle_pending(self, row: Mapping[str, Any]) -> None:
        """A "Resuming…"/"Pausing…" line stays only until the state it promised shows."""
        if self.pending is None or self.pending[1] != row.get("name"):
            return
        verb = self.pending[0]
        state = glossary.rented_state(row)
        if verb == "resume" and state == "Ready":
            self.message.setText(f"{row.get('name')} is running.")
            self.pending = None
        elif verb == "pause" and state.startswith("Paused"):
            self.message.setText(f"{row.get('name')} is paused; billing has stopped.")
            self.pending = None
        elif verb == "stop" and not row.get("stoppable"):
            self.message.setText(f"{row.get('name')}'s batch window has ended; billing has stopped.")
            self.pending = None

    def _show_lan(self, row: LocalNodeRow | PeerNodeRow) -> None:
        where = "this machine" if row["kind"] == "local" else "a LAN peer"
        self.title.setText(f"{row['name']} — {where}")
        hw = row["hardware"] or {}
        gpus = ", ".join(g.get("name", "?") for g in hw.get("gpus") or []) or "no GPU found"
        self.subtitle.setText(f"{row['os'] or ''} · {hw.get('cpus') or '?'} CPUs · "
                              f"{hw.get('memory_gb') or '?'} GB · {gpus}")
        self._fact("State", fmt.node_state(row))
        self._fact("Requests now", row["in_flight"])
        for engine in row["engines"] or []:
            status = engine.get("error") or "ok"
            self._fact(f"Engine {engine.get('name')}", f"{engine.get('api')} at {engine.get('url')} — {status}; "
                                                       f"models: {', '.join(engine.get('models') or []) or 'none'}")
        self._fact("Models", ", ".join(row["models"]) or "–")

    # -- actions ---------------------------------------------------------------------------------------------

    def _spawn(self, verb: str) -> None:
        if self.name:
            self.tasks.spawn(self.act(verb, self.name), name=f"{verb} {self.name}", on_error=self._failed)

    def _failed(self, title: str, message: str) -> None:
        # Many messages already start with what the title says; say it once.
        self.message.setText(message if message.lower().startswith(title.lower()) else f"{title}: {message}")

    def _provider_name(self) -> str:
        return providers.display_name(self.own["provider"] if self.own is not None else None)

    async def act(self, verb: str, name: str) -> bool:
        own = self.own
        if verb == "pause":
            self.message.setText(f"Pausing {name}…")
            await self.facade.rented_pause(name)
            self.message.setText(f"Pausing {name}; billing stops once {self._provider_name()} has paused it.")
            self.pending = ("pause", name)
        elif verb == "resume":
            self.message.setText(f"Resuming {name}… (billing starts when it initializes)")
            await self.facade.rented_resume(name)
            self.message.setText(f"{name} is starting (billing).")
            self.pending = ("resume", name)
        elif verb == "stop":
            if not await confirm(self, f"Stop {name}?", f"Stop {name}'s batch window?", action="Stop window",
                                 informative=stop_tip(own), destructive=True):
                return False
            self.message.setText(f"Stopping {name}…")
            await self.facade.rented_stop(name)
            self.message.setText(f"Stopping {name}: {self._provider_name()} cancels its job; billing stops.")
            self.pending = ("stop", name)
        elif verb == "delete":
            if own is None:  # the button shows only on this node's own rented nodes
                return False
            managed = "delete" in own["actions"]
            title = f"Delete {name}?" if managed else f"Remove {name} from Pairwise?"
            if not await confirm(self, title, title, action="Delete" if managed else "Remove",
                                 informative=what_delete_loses(own), destructive=True):
                return False
            if managed:
                await self.facade.rented_delete(name)
            else:
                await self.facade.rented_detach(name)
            self.message.setText(f"{name} {'deleted' if managed else 'removed'}.")
        self.changed.emit()
        self.refresh()
        return True

    def fields(self) -> Fields:
        return Fields(usd_per_day=self.day_cap.value(), usd_per_month=self.month_cap.value(),
                      idle_pause_min=self.idle_min.value(), wake_on_request=self.wake.isChecked(),
                      pause_on_sponsor_exit=self.pause_on_exit.isChecked(), peer_usd=self.peer_usd.text(),
                      peer_rate=self.peer_rate.text())

    def edits(self) -> list[Change]:
        """What Apply would save now (against the row as it is now); raises ConfigError on a bad field."""
        own = self.own
        return budget_edit.changes(own, self.fields()) if own is not None else []

    def _edited(self) -> bool:
        """Does a field hold something the user typed and has not applied (against the row it was loaded
        from)? Then a refresh leaves it alone."""
        if self._loaded is None:
            return False
        try:
            return bool(budget_edit.changes(self._loaded, self.fields()))
        except PairwiseError:
            return True  # a half-typed per-peer entry is an edit too

    def _load_fields(self, row: RentedActionRow) -> None:
        budget, life, limits = row["budget"], row["lifecycle"], row["requesters"]
        self._loading = True
        try:
            self.day_cap.setValue(budget["usd_per_day"] or 0)
            self.month_cap.setValue(budget["usd_per_month"] or 0)
            self.idle_min.setValue(life["idle_pause_min"] or 0)
            self.wake.setChecked(life["wake_on_request"])
            self.pause_on_exit.setChecked(life["pause_on_sponsor_exit"])
            self.peer_usd.setText(peer_text(limits["usd_per_day"]))
            self.peer_rate.setText(peer_text(limits["requests_per_min"]))
        finally:
            self._loading = False
        self._loaded = row

    def _update_preview(self) -> None:
        if self._loading:
            return
        try:
            text = budget_edit.preview(self.edits())
        except PairwiseError as exc:
            text = exc.message
        self.preview.setText(text)
        self.preview.setVisible(bool(text))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Enter in a budget field applies, as it does in the per-peer fields."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) \
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.apply_settings()
            return True
        return False

    def apply_settings(self) -> None:
        if not self.name or self.own is None:
            return
        try:
            found = self.edits()
        except PairwiseError as exc:
            self._failed(exc.title, exc.message)
            return
        if not found:
            self.message.setText(f"{self.name}: nothing to save; every setting is as shown.")
            return
        self.tasks.spawn(self._apply(self.name, found), name=f"set {self.name}", on_error=self._failed)

    async def _apply(self, name: str, found: list[Change]) -> None:
        question = budget_edit.removal_question(name, found)
        if question is not None and not await confirm(
                self, "Remove the cap?", question, action="Remove the cap", cancel="Keep the cap", destructive=True):
            self.message.setText(f"{name}: nothing saved; the cap stays.")
            return
        await self.facade.rented_set(name, budget_edit.rented_change(found))
        self._loaded = None  # what was saved is what the row now says: load it
        self.refresh()
        text = budget_edit.saved(name, found)
        refusal = glossary.resume_refusal(self.own) if self.own is not None else None
        self.message.setText(f"{text} {refusal}" if refusal else text)  # a save never hides why Resume waits
