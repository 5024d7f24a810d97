"""Quit: pause every rented GPU that pauses on exit while the network is up, then the node's own
stop. A GPU that cannot be paused (Hugging Face unreachable, a refusal) blocks the quit with a
window that names each endpoint still billing and its price, and offers Keep trying, Open on
Hugging Face, and Quit anyway — saying until when it bills. Quitting never leaves a bill silently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from PySide6.QtCore import QEvent, QObject, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QSessionManager
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.services.api import glossary
from app.services.platform.session_end import block_shutdown
from app.ui.aio import error_text
from app.ui.facade import NodeFacade
from app.ui.resources import app_icon

PAUSE_TIMEOUT_S = 15.0  # one attempt; the user decides what happens after it
HF_ENDPOINT_PAGE = "https://endpoints.huggingface.co/{endpoint}"
BACKSTOP = ("until you pause it on Hugging Face, or until Hugging Face scales it to zero after it has had "
            "no requests for its scale-to-zero time (15 minutes for endpoints Pairwise created)")


@dataclass
class StillBilling:
    name: str
    price_per_hour: float | None
    endpoint: str | None
    why: str

    def line(self) -> str:
        return f"{self.name} is still billing at {glossary.per_hour(self.price_per_hour)}: {self.why}"


class Choice(Enum):
    KEEP_TRYING = "keep trying"
    QUIT_ANYWAY = "quit anyway"


class QuitDialog(QDialog):
    def __init__(self, targets: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Quitting Pairwise")
        self.setWindowIcon(app_icon())
        self.setWindowFlag(Qt.WindowType.WindowCloseButtonHint, False)
        layout = QVBoxLayout(self)
        if targets:
            intro = f"Pausing {', '.join(targets)} so {'they stop' if len(targets) > 1 else 'it stops'} billing…"
        else:
            intro = "Stopping the node…"
        self.intro = QLabel(intro)
        self.intro.setWordWrap(True)
        self.step = QLabel("")
        self.step.setObjectName("quitStep")
        self.step.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy: HF answers when it answers (bounded per attempt)
        layout.addWidget(self.intro)
        layout.addWidget(self.step)
        layout.addWidget(self.bar)
        buttons = QHBoxLayout()
        self.keep_trying = QPushButton("Keep trying")
        self.keep_trying.setObjectName("quitKeepTrying")
        self.open_hf = QPushButton("Open on Hugging Face")
        self.open_hf.setObjectName("quitOpenHf")
        self.quit_anyway = QPushButton("Quit anyway")
        self.quit_anyway.setObjectName("quitAnyway")
        for button in (self.keep_trying, self.open_hf, self.quit_anyway):
            buttons.addWidget(button)
            button.setVisible(False)
        layout.addLayout(buttons)
        self.keep_trying.setDefault(True)
        self.keep_trying.clicked.connect(lambda: self._choose(Choice.KEEP_TRYING))
        self.quit_anyway.clicked.connect(lambda: self._choose(Choice.QUIT_ANYWAY))
        self.open_hf.clicked.connect(self._open_hf)
        self.steps: list[str] = []
        self.billing: list[StillBilling] = []
        self.opened: list[str] = []  # pages handed to the desktop (tests read it)
        self._choice: asyncio.Future[Choice] | None = None
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * 60)

    def say(self, text: str) -> None:
        self.steps.append(text)
        self.step.setText(text)

    # -- blocked: something still bills ----------------------------------------------------------------------

    def blocked(self, billing: list[StillBilling]) -> None:
        self.billing = billing
        self.bar.setVisible(False)
        self.intro.setText("<b>Not paused: " + ", ".join(b.name for b in billing) + "</b>")
        lines = [b.line() for b in billing]
        lines.append(f"If you quit now, {'they keep' if len(billing) > 1 else 'it keeps'} billing {BACKSTOP}.")
        self.step.setText("\n\n".join(lines))
        for button in (self.keep_trying, self.quit_anyway):
            button.setVisible(True)
        self.open_hf.setVisible(any(b.endpoint for b in billing))
        self.adjustSize()

    async def choose(self) -> Choice:
        self._choice = asyncio.get_running_loop().create_future()
        try:
            return await self._choice
        finally:
            self._choice = None

    def _choose(self, choice: Choice) -> None:
        if self._choice is not None and not self._choice.done():
            self._choice.set_result(choice)

    def _open_hf(self) -> None:
        for item in self.billing:
            if item.endpoint:
                url = HF_ENDPOINT_PAGE.format(endpoint=item.endpoint)
                self.opened.append(url)
                QDesktopServices.openUrl(QUrl(url))

    def working(self, text: str) -> None:
        for button in (self.keep_trying, self.open_hf, self.quit_anyway):
            button.setVisible(False)
        self.bar.setVisible(True)
        self.intro.setText(text)


async def pause_for_quit(facade: NodeFacade, targets: list[str], dialog: QuitDialog) -> list[StillBilling]:
    """Pause each target at once; what could not be paused, with why."""

    async def one(name: str) -> StillBilling | None:
        before = facade.rented_row(name)
        window = before is not None and "hf_job" in before
        dialog.say(f"Cancelling {name}'s batch window…" if window else f"Pausing {name}…")
        try:
            await asyncio.wait_for(facade.rented_pause_for_exit(name), PAUSE_TIMEOUT_S)
            return None
        except TimeoutError:
            why = f"Hugging Face did not answer within {PAUSE_TIMEOUT_S:g} s"
        except Exception as exc:  # any refusal is shown as is: the user decides, not a log line
            title, message = error_text(exc)
            why = f"{title}: {message}"
        row = facade.rented_row(name)
        return StillBilling(name, row["price_per_hour"] if row is not None else None,
                            row["endpoint"] if row is not None else None, why)

    results = await asyncio.gather(*(one(name) for name in targets))
    return [r for r in results if r is not None]


async def quit_node(facade: NodeFacade, dialog: QuitDialog, *, interactive: bool = True,
                    warn: Callable[[list[StillBilling]], None] | None = None) -> list[StillBilling]:
    """Pause, then stop; returns what was still billing when the node stopped. Not ``interactive``
    (a stop signal: the session is ending and nobody can answer) it warns and goes on."""
    targets = facade.pause_on_exit_targets()
    billing: list[StillBilling] = []
    while targets:
        billing = await pause_for_quit(facade, targets, dialog)
        if not billing:
            break
        dialog.blocked(billing)
        if not interactive:
            if warn is not None:
                warn(billing)
            break
        if await dialog.choose() is Choice.QUIT_ANYWAY:
            dialog.working("Quitting; " + ", ".join(b.name for b in billing) + " may still be billing.")
            facade.waive_pause_on_exit([b.name for b in billing])
            break
        targets = [b.name for b in billing]
        dialog.working(f"Pausing {', '.join(targets)} so {'they stop' if len(targets) > 1 else 'it stops'} "
                       "billing…")
    unwatch = facade.watch_pause_on_exit(lambda name: dialog.say(f"Pausing {name}…"))
    try:
        await facade.stop(progress=lambda label: dialog.say(label))
    finally:
        unwatch()
    dialog.say("Stopped.")
    return billing


SHUTDOWN_REASON = "Pausing rented GPUs so they stop billing"


class SessionEndHooks(QObject):
    """The desktop session ending is a Quit without questions (nobody is there to answer).

    * Windows logoff/shutdown: ``WM_QUERYENDSESSION`` reaches Qt as ``commitDataRequest``. While a
      rented GPU still has to be paused the end is held (``cancel``, with the reason on Windows'
      "apps are preventing shutdown" screen), which goes on by itself once Pairwise has quit.
    * macOS logout or shutdown: the app's terminate request reaches Qt as a ``Quit`` event; it is
      held the same way, and Pairwise quits once pause on exit ran.
    """

    def __init__(self, app: QGuiApplication, request_quit: Callable[[], None], quitting: Callable[[], bool],
                 must_finish: Callable[[], bool], window_id: Callable[[], int] | None = None) -> None:
        super().__init__(app)
        self.app, self.request_quit, self.quitting, self.must_finish = app, request_quit, quitting, must_finish
        self.window_id = window_id
        self.held = 0  # session ends held until the quit finished (tests read it)
        app.installEventFilter(self)
        app.commitDataRequest.connect(self.commit_data)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.app and event.type() == QEvent.Type.Quit and not self.quitting():
            self.request_quit()  # the tray's own quit; its final app.quit() passes (quitting() is True)
            event.ignore()
            self.held += 1
            return True
        return False

    def commit_data(self, manager: QSessionManager) -> None:
        holding = self.must_finish()
        if not self.quitting():
            self.request_quit()
        if holding:
            manager.cancel()
            self.held += 1
            if self.window_id is not None:
                block_shutdown(self.window_id(), SHUTDOWN_REASON)
