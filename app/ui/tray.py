"""The tray icon and its menu. The icon follows ``tray_model.tray_state``; the menu is rebuilt
from live snapshots every time it is about to show (and the icon is refreshed, coalesced, on
every node or job event and every few seconds so running costs stay current)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app.services.api.rows import RentedActionRow
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.notify import Notification, Notifier
from app.ui.resources import tray_icon
from app.ui.tray_model import MenuItem, attention_reasons, menu_model, tooltip, tray_state

REFRESH_MS = 5000
COALESCE_MS = 150


class TrayController(QObject):
    open_requested = Signal()
    add_rented_requested = Signal()
    welcome_requested = Signal()
    quit_requested = Signal()
    show_node_requested = Signal(str)
    raise_budget_requested = Signal(str)
    delete_requested = Signal(str)

    def __init__(self, facade: NodeFacade, notifier: Notifier, tasks: Tasks, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.facade, self.notifier, self.tasks = facade, notifier, tasks
        self.state = "idle"
        self.shown_tooltip = ""
        self.frozen = False
        self.icon = QSystemTrayIcon(tray_icon("idle"), self)
        self.menu = QMenu()
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(self.rebuild)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(COALESCE_MS)
        self._pending.timeout.connect(lambda: self.refresh())
        self._periodic = QTimer(self)
        self._periodic.setInterval(REFRESH_MS)
        self._periodic.timeout.connect(lambda: self.refresh())
        notifier.attention_changed.connect(lambda _on: self.refresh_soon())
        self.rebuild()  # a menu exists before the first click (some tray hosts read it at once)

    def start(self) -> None:
        self.refresh()
        self.icon.show()
        self._periodic.start()

    def freeze(self) -> None:
        """Keep the icon and its menu as they are (the node is stopping: no more snapshots)."""
        self.frozen = True
        self._periodic.stop()
        self._pending.stop()

    def stop(self) -> None:
        self.freeze()
        self.icon.hide()

    # -- state -----------------------------------------------------------------------------------------------

    def _snapshot(self) -> tuple[list[RentedActionRow], int]:
        """The live rows the icon, tooltip and menu are all rendered from; warnings whose cause these rows
        say is gone are dropped first, so none of the three shows a warning beside the state that ended it."""
        rented = self.facade.rented()
        self.notifier.settle(rented)
        return rented, len(self.facade.jobs(active_only=True, limit=1000))

    def refresh_soon(self) -> None:
        if not self.frozen and not self._pending.isActive():
            self._pending.start()

    def refresh(self, snapshot: tuple[list[RentedActionRow], int] | None = None) -> None:
        if self.frozen:
            return
        rented, active = snapshot or self._snapshot()
        state = tray_state(rented=rented, active_jobs=active, attention=bool(self.notifier.attention))
        text = tooltip(state, name=self.facade.name, active_jobs=active, rented=rented)
        # Only what changed is handed to the tray host: a setIcon every few seconds costs CPU idle.
        if state != self.state:
            self.state = state
            self.icon.setIcon(tray_icon(state))
        if text != self.shown_tooltip:
            self.shown_tooltip = text
            self.icon.setToolTip(text)

    # -- menu ------------------------------------------------------------------------------------------------

    def model(self, snapshot: tuple[list[RentedActionRow], int] | None = None) -> list[MenuItem]:
        rented, active = snapshot or self._snapshot()
        attention = attention_reasons(rented) + [n.title for n in self.notifier.attention]
        summary = self.facade.requesters_summary()
        return menu_model(name=self.facade.name, nodes=self.facade.nodes(), rented=rented, active_jobs=active,
                          attention=attention,
                          requesters=summary["text"] if summary and (summary["lan_on"] or summary["keys"]) else None)

    def rebuild(self) -> None:
        if self.frozen:
            return
        snapshot = self._snapshot()  # the menu, the icon and the tooltip from the same rows
        self.menu.clear()
        self._fill(self.menu, self.model(snapshot))
        self.refresh(snapshot)

    def _fill(self, menu: QMenu, items: list[MenuItem]) -> None:
        for item in items:
            if item.separator:
                menu.addSeparator()
            elif item.children:
                sub = menu.addMenu(item.text)
                sub.setToolTipsVisible(True)
                self._fill(sub, item.children)
            else:
                action = QAction(item.text, menu)
                action.setEnabled(item.enabled)
                if item.tooltip:
                    action.setToolTip(item.tooltip)
                if item.action:
                    action.setData(item.action)
                    action.triggered.connect(lambda _=False, a=item.action: self.trigger(a))
                menu.addAction(action)

    def trigger(self, action: str) -> None:
        verb, _, name = action.partition(":")
        if verb == "open":
            self.open_requested.emit()
        elif verb == "add_rented":
            self.add_rented_requested.emit()
        elif verb == "welcome":
            self.welcome_requested.emit()
        elif verb == "quit":
            self.quit_requested.emit()
        elif verb == "show":
            self.show_node_requested.emit(name)
        elif verb == "budget":
            self.raise_budget_requested.emit(name)
        elif verb == "delete":
            self.delete_requested.emit(name)
        elif verb == "pause":
            self.tasks.spawn(self._act(self.facade.rented_pause(name)), name=f"pause {name}")
        elif verb == "resume":
            self.tasks.spawn(self._act(self.facade.rented_resume(name)), name=f"resume {name}")
        elif verb == "stop":
            self.tasks.spawn(self._act(self.facade.rented_stop(name)), name=f"stop {name}")

    async def _act(self, coro: Any) -> None:
        await coro
        self.refresh_soon()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.open_requested.emit()

    # -- notifications ---------------------------------------------------------------------------------------

    def show_message(self, note: Notification) -> None:
        icon = {"warning": QSystemTrayIcon.MessageIcon.Warning,
                "error": QSystemTrayIcon.MessageIcon.Critical}.get(note.level, QSystemTrayIcon.MessageIcon.Information)
        self.icon.showMessage(note.title, note.message, icon, 10_000)
