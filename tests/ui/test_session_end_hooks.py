"""The tray hears the session end (issue 28, item 7): macOS' terminate request arrives as Qt's
``Quit`` event, Windows' ``WM_QUERYENDSESSION`` as ``commitDataRequest`` (its session manager faked:
Qt makes one only for a real logoff). Either starts the tray's Quit without questions, and holds the
end while a rented GPU still has to be paused."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.ui.quitting import SessionEndHooks


class Quitter:
    def __init__(self, targets: list[str]) -> None:
        self.requests = 0
        self.targets = targets

    def request(self) -> None:
        self.requests += 1

    def hooks(self, app: QApplication) -> SessionEndHooks:
        return SessionEndHooks(app, self.request, quitting=lambda: self.requests > 0,
                               must_finish=lambda: bool(self.targets))


class FakeSessionManager:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def test_macos_terminate_request_starts_quit_once_and_lets_the_final_quit_through(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    quitter = Quitter(["gpu"])
    hooks = quitter.hooks(app)
    try:
        terminate = QEvent(QEvent.Type.Quit)
        QCoreApplication.sendEvent(app, terminate)  # what Cocoa's applicationShouldTerminate: sends
        assert quitter.requests == 1 and hooks.held == 1 and not terminate.isAccepted()
        assert hooks.eventFilter(app, QEvent(QEvent.Type.Quit)) is False  # the tray's own quit, once stopped
        assert quitter.requests == 1
    finally:
        app.removeEventFilter(hooks)
        hooks.deleteLater()


def test_windows_logoff_holds_the_end_only_while_a_gpu_must_be_paused(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    for targets, held in ((["gpu"], True), ([], False)):
        quitter = Quitter(targets)
        hooks = quitter.hooks(app)
        try:
            manager = FakeSessionManager()
            hooks.commit_data(manager)  # type: ignore[arg-type]
            assert quitter.requests == 1 and manager.cancelled is held
        finally:
            app.removeEventFilter(hooks)
            hooks.deleteLater()
