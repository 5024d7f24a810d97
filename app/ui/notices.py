"""Money notices that must not be lost: where the desktop drops tray messages (macOS before the user
allowed Pairwise's notifications, or after a refusal; a desktop with no message support), budget
pauses, pauses not sent, prompts that left the LAN and the rest of what bills are also shown in a
window of the app's own (``NoticeWindow``). ``Delivery`` is the notifier's sink: the tray message
always, the window too when messages may not reach the user. It asks for the permission at the
moment it matters: the first rented GPU (or the first money notice, whichever comes first)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from app.services.events import (
    BudgetPaused,
    CapEnforced,
    IdlePaused,
    OffLanPrompt,
    OwedPauseTaken,
    PauseOwed,
    PriceChanged,
    PriceUnknown,
    ReconcilePaused,
    RentedFailed,
    StillBilling,
)
from app.services.platform import notifications
from app.ui.notify import Notification, Sink
from app.ui.resources import app_icon
from app.ui.sizing import fit_to_screen

log = logging.getLogger(__name__)

MONEY_KINDS = frozenset({
    BudgetPaused.kind, CapEnforced.kind, PauseOwed.kind, OwedPauseTaken.kind, StillBilling.kind, OffLanPrompt.kind,
    "off_lan_summary", "quit_not_paused", ReconcilePaused.kind, IdlePaused.kind, RentedFailed.kind,
    PriceChanged.kind, PriceUnknown.kind,
})
RECHECK_S = 60.0  # the user may allow notifications in System Settings meanwhile
NOTE_ROLE = Qt.ItemDataRole.UserRole
WHY = {
    "denied": "macOS does not show Pairwise's notifications (they were not allowed)",
    "not_asked": "macOS has not been told yet whether Pairwise may show notifications",
    "unknown": "this Mac cannot say whether Pairwise's notifications are shown",
    "no_messages": "this desktop cannot show Pairwise's notifications",
}
HOW = ("Money notices are kept here so none is lost. To get them as notifications too, allow them in "
       "System Settings → Notifications → Pairwise.")


class NoticeWindow(QWidget):
    """The money notices the desktop may not have shown, newest first; Open shows what one is about."""

    open_requested = Signal(object)  # Notification

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Pairwise — money notices")
        self.setWindowIcon(app_icon())
        layout = QVBoxLayout(self)
        self.why = QLabel("")
        self.why.setObjectName("noticesWhy")
        self.why.setWordWrap(True)
        layout.addWidget(self.why)
        self.list = QListWidget()
        self.list.setObjectName("moneyNotices")
        self.list.setWordWrap(True)
        self.list.itemDoubleClicked.connect(lambda _item: self.open_selected())
        layout.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open")
        self.open_button.clicked.connect(self.open_selected)
        self.dismiss_button = QPushButton("Dismiss all")
        self.dismiss_button.clicked.connect(self.dismiss)
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.dismiss_button)
        layout.addLayout(buttons)
        fit_to_screen(self, width_chars=80, height_lines=18)

    def add(self, note: Notification, why: str) -> None:
        self.why.setText(f"{WHY.get(why, WHY['unknown'])}. {HOW}")
        item = QListWidgetItem(f"{time.strftime('%H:%M')} — {note.title}\n{note.message}")
        item.setData(NOTE_ROLE, note)
        self.list.insertItem(0, item)
        self.list.setCurrentRow(0)
        self.show()
        self.raise_()
        self.activateWindow()

    def texts(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def open_selected(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.open_requested.emit(item.data(NOTE_ROLE))

    def dismiss(self) -> None:
        self.list.clear()
        self.hide()


class Delivery:
    """The notifier's sink: every notification as a tray message; a money notice also in the window
    when the desktop may not show it. ``ask`` asks the OS once (at the first rented GPU)."""

    def __init__(self, show_message: Sink, window: NoticeWindow, *,
                 supports_messages: Callable[[], bool] = QSystemTrayIcon.supportsMessages,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.show_message, self.window = show_message, window
        self.supports_messages, self.clock = supports_messages, clock
        self.asked = False
        self._answer: str | None = None
        self._read_at = 0.0

    def ask(self) -> str:
        """At the first rent: ask for the permission where the OS needs it; the answer, kept."""
        if not self.asked:
            self.asked = True
            self._answer, self._read_at = notifications.request(), self.clock()
            log.info("notification permission: %s", self._answer)
        return self.reach()

    def reach(self) -> str:
        """"allowed", or why a tray message may not reach the user."""
        if not self.supports_messages():
            return "no_messages"
        if self._answer is None or self.clock() - self._read_at > RECHECK_S:
            self._answer, self._read_at = notifications.permission(), self.clock()
        return self._answer

    def __call__(self, note: Notification) -> None:
        self.show_message(note)
        if note.kind not in MONEY_KINDS:
            return
        reach = self.ask() if not self.asked else self.reach()
        if reach != "allowed":
            self.window.add(note, reach)
