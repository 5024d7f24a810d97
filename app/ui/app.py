"""``TrayApp``: the tray application around one in-process node, on a qasync loop.

Wires the pieces: the node's bus → ``EventBridge`` → views and ``Notifier``; the tray menu and
the window act through ``NodeFacade``; Quit runs ``quit_node``. Nothing here blocks the loop:
every service call is a task (``Tasks``), every dialog is opened, not exec'd.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon

from app.services.api import FRONT_DOOR, NodeApi
from app.services.errors import PairwiseError, PortTaken
from app.services.events import BudgetPaused
from app.services.platform.signals import install_stop_handlers
from app.ui import wheel
from app.ui.aio import Tasks, install_asyncgen_hooks
from app.ui.bridge import EventBridge
from app.ui.compose import register_providers
from app.ui.dialogs import ask
from app.ui.facade import NodeFacade
from app.ui.notices import Delivery, NoticeWindow
from app.ui.notify import Notification, Notifier, Sink
from app.ui.quitting import QuitDialog, SessionEndHooks, StillBilling, quit_node
from app.ui.tray import TrayController
from app.ui.wake import WakeWatcher
from app.ui.welcome import FRONTDOOR_CHECK_MS, WelcomeWindow
from app.ui.window import MainWindow

if TYPE_CHECKING:
    from app.services.api import Node
    from app.ui.wizard.wizard import RentWizard

log = logging.getLogger(__name__)
TRAY_WAIT_S = 10.0  # a session's tray host may start after us (the aw-qt lesson)


class TrayApp(QObject):
    quit_finished = Signal()

    def __init__(self, node: Node, *, notify_sink: Sink | None = None, summary_interval_s: float = 60.0,
                 tray_wait_s: float = TRAY_WAIT_S, discover_ports: list[int] | None = None,
                 frontdoor_check_ms: int = FRONTDOOR_CHECK_MS) -> None:
        super().__init__()
        qt_app = QApplication.instance()
        if isinstance(qt_app, QApplication):
            qt_app.setQuitOnLastWindowClosed(False)  # closing a window keeps Pairwise in the tray
        wheel.install()
        register_providers()  # each provider's tray parts, before any view asks for them
        self.node = node
        self.facade = NodeFacade(NodeApi(node))
        self.notifier = Notifier(summary_interval_s=summary_interval_s)
        self.tasks = Tasks(on_error=self.report_error)
        self.bridge = EventBridge(node.bus)
        self.tray = TrayController(self.facade, self.notifier, self.tasks)
        self.notices = NoticeWindow()
        self.notices.open_requested.connect(self._open_note)
        self.delivery = Delivery(notify_sink or self.tray.show_message, self.notices)
        self.notifier.sink = self.delivery
        self.window = MainWindow(self.facade, self.tasks)
        self.wizard: RentWizard | None = None
        self.welcome: WelcomeWindow | None = None
        self.discover_ports, self.frontdoor_check_ms = discover_ports, frontdoor_check_ms
        self.window.settings.discover_ports = discover_ports
        self.quit_dialog: QuitDialog | None = None
        self.tray_wait_s = tray_wait_s
        self._done = asyncio.Event()
        self._quitting: asyncio.Task[None] | None = None
        self._uninstall_signals: Callable[[], None] | None = None
        self._tray_deadline = 0.0
        self._tray_poll = QTimer(self)
        self._tray_poll.setInterval(250)
        self._tray_poll.timeout.connect(self._check_tray)

        self.bridge.received.connect(self.notifier.on_event)
        self.bridge.nodes_changed.connect(self.tray.refresh_soon)
        self.bridge.nodes_changed.connect(self._ask_at_first_rent)
        self.bridge.nodes_changed.connect(self.window.refresh_soon)
        self.bridge.jobs_changed.connect(self.window.refresh_soon)
        self.tray.open_requested.connect(self.open_window)
        self.tray.add_rented_requested.connect(self.open_wizard)
        self.tray.welcome_requested.connect(self.open_welcome)
        self.tray.quit_requested.connect(self.request_quit)
        self.tray.show_node_requested.connect(self.window.show_node)
        self.tray.raise_budget_requested.connect(self.window.raise_budget)
        self.tray.delete_requested.connect(self.window.delete_node)
        self.wake = WakeWatcher(parent=self)
        self.wake.woke.connect(self._woke)
        self.tray.icon.messageClicked.connect(self._message_clicked)
        self.window.add_rented_requested.connect(self.open_wizard)
        self.window.sign_in_requested.connect(lambda key: self.open_wizard(sign_in=key))
        self.window.shown.connect(self.notifier.acknowledge)
        self.window.shown.connect(self._welcome_above)

    # -- start and run ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        install_asyncgen_hooks()
        taken: PortTaken | None = None
        try:
            await self.node.start()
        except PortTaken as exc:
            if exc.role != FRONT_DOOR:
                raise
            # Another program has the front door: run the rest, and open it the moment it is free.
            taken = exc
            await self.node.start(frontdoor=False)
        self.tray.start()
        self.wake.start()
        self._tray_deadline = time.monotonic() + self.tray_wait_s
        self._tray_poll.start()
        # First start: a home that has not seen the welcome and has no engine yet (a home from before
        # the welcome window, with its engines, is not greeted again).
        if taken is not None or (not self.facade.welcomed() and not self.facade.engines()):
            self.open_welcome(taken)

    def open_welcome(self, problem: PortTaken | None = None) -> None:
        if self.welcome is not None and self.welcome.isVisible():
            self.welcome.raise_()
            return
        if self.welcome is None:
            self.welcome = WelcomeWindow(self.facade, self.tasks, problem, ports=self.discover_ports,
                                         check_ms=self.frontdoor_check_ms)
            self.welcome.frontdoor_opened.connect(self.window.refresh_soon)
            self.welcome.engines.adopted.connect(self.window.refresh_soon)
            self.welcome.pair.paired.connect(self.window.refresh_soon)
            self.welcome.rent_requested.connect(self.open_wizard)
            self.welcome.add_engine_requested.connect(self.window.open_engines)
        self.welcome.start()
        if self.window.isVisible():
            self.welcome.stay_above(self.window)

    def _welcome_above(self) -> None:
        """The main window opening (no tray host, a second start, the menu) never covers the welcome."""
        if self.welcome is not None and self.welcome.isVisible():
            welcome = self.welcome  # after the window's own raise (its show event comes first)
            QTimer.singleShot(0, lambda: welcome.stay_above(self.window))

    def _check_tray(self) -> None:
        """A Qt timer, not a task: nothing of asyncio's is left pending if the app stops meanwhile."""
        if QSystemTrayIcon.isSystemTrayAvailable():
            self._tray_poll.stop()
            self.tray.icon.show()
        elif time.monotonic() >= self._tray_deadline:
            self._tray_poll.stop()
            log.info("no system tray after %.0f s: showing the window instead", self.tray_wait_s)
            self.open_window()

    def install_signal_handlers(self) -> None:
        """SIGINT/SIGTERM quit the way the menu does (pause-on-exit included), inside the Qt loop."""
        # A stop signal means the session is ending: nobody can answer a dialog, so Quit does not ask.
        self._uninstall_signals = install_stop_handlers(asyncio.get_running_loop(),
                                                        lambda: self.request_quit(interactive=False))
        self.session_end = SessionEndHooks(  # logoff, shutdown, macOS logout: quit, pause on exit first
            QApplication.instance(), lambda: self.request_quit(interactive=False),  # type: ignore[arg-type]
            quitting=lambda: self._quitting is not None, must_finish=lambda: bool(self.facade.pause_on_exit_targets()),
            window_id=lambda: int(self.window.winId()))

    async def run(self) -> int:
        """Start, then live until Quit has stopped the node. 0 on a clean quit."""
        self.install_signal_handlers()
        try:
            await self.start()
        except PairwiseError as exc:
            box = QMessageBox(QMessageBox.Icon.Critical, exc.title, exc.message, QMessageBox.StandardButton.Ok)
            await ask(box)
            return 1
        await self._done.wait()
        return 0

    async def closed(self) -> None:
        """Until Quit has stopped the node."""
        await self._done.wait()

    def is_closed(self) -> bool:
        return self._done.is_set()

    # -- actions ---------------------------------------------------------------------------------------------

    def open_window(self) -> None:
        self.window.bring_forward()

    def open_wizard(self, sign_in: str | None = None) -> None:
        """Add rented GPU; with ``sign_in`` (a provider's key), that provider's sign-in page alone."""
        from app.ui.wizard.wizard import RentWizard

        if self.wizard is not None and self.wizard.isVisible():
            self.wizard.raise_()
            self.wizard.activateWindow()
            return
        self.wizard = RentWizard(self.facade, self.tasks, sign_in=sign_in or None)
        self.wizard.finished.connect(lambda _code: self.window.refresh_soon())
        self.wizard.show()

    def _woke(self, slept_s: float) -> None:
        log.info("woke after about %.0f s asleep: asking the rented GPUs' providers now", slept_s)
        self.facade.recheck_rented()
        self.tray.refresh_soon()

    def _ask_at_first_rent(self) -> None:
        """The first rented GPU is when notices start to be about money: ask for the notification
        permission then (macOS), so a refusal is known before the first budget pause."""
        if not self.delivery.asked and self.facade.rented():
            self.delivery.ask()

    def _message_clicked(self) -> None:
        self._open_note(self.notifier.sent[-1] if self.notifier.sent else None)

    def _open_note(self, note: Notification | None) -> None:
        """A click on a notification opens what it is about; on a budget pause, the budget itself."""
        if note is not None and note.node and note.kind == BudgetPaused.kind:
            self.window.raise_budget(note.node)
        elif note is not None and note.node:
            self.window.show_node(note.node)
        else:
            self.open_window()

    def report_error(self, title: str, message: str) -> None:
        self.notifier.show(Notification("error", title, message, "error"))

    def request_quit(self, interactive: bool = True) -> None:
        """Quit from the menu asks before leaving a GPU billing; a stop signal (the session is
        ending) cannot wait for an answer, so it says what still bills and goes."""
        if self._quitting is None:
            self._quitting = asyncio.ensure_future(self.quit(interactive=interactive))
        elif self.quit_dialog is not None and not self._done.is_set():
            # Quitting already: a second Quit brings its window forward, a stop signal stops waiting for
            # an answer (one more pause, then a warning of what still bills). Never ignored.
            if interactive:
                self.quit_dialog.bring_forward()
            else:
                self.quit_dialog.interrupt()

    def _warn_still_billing(self, billing: list[StillBilling]) -> None:
        self.notifier.show(Notification("quit_not_paused", "Still billing after Pairwise quit",
                                        " ".join(b.line() for b in billing), "error"))

    async def quit(self, interactive: bool = True) -> None:
        simulated = any(r["simulated"] for r in self.facade.rented())
        self.quit_dialog = QuitDialog(self.facade.pause_on_exit_targets(), simulated=simulated)
        self.quit_dialog.show()
        self.bridge.close()  # from here on the node is stopping: views stop reading it
        self.tray.freeze()
        self.window.shutdown()
        if self.welcome is not None:
            self.welcome.shutdown()
        if self.wizard is not None:
            self.wizard.close()  # stops its progress polling; an endpoint it started keeps its own lifecycle
        try:
            await quit_node(self.facade, self.quit_dialog, interactive=interactive, warn=self._warn_still_billing)
        except Exception as exc:  # the node's stop logs its own step failures; never hang in Quit
            log.error("stopping the node failed: %s", exc)
        finally:
            await self.tasks.cancel_all()
            self.notifier.stop()
            self.notices.hide()
            self.wake.stop()
            self._tray_poll.stop()
            self.tray.stop()
            self.quit_dialog.finish()
            if self._uninstall_signals is not None:
                self._uninstall_signals()
            self._done.set()
            self.quit_finished.emit()


def application() -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(["pairwise"])
    app.setApplicationName("Pairwise")
    app.setQuitOnLastWindowClosed(False)  # closing the window keeps the tray
    wheel.install()
    return app
