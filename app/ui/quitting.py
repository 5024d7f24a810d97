"""Quit: pause every rented GPU that pauses on exit while the network is up, then the node's own
stop. A GPU that cannot be paused (its provider unreachable, a refusal) blocks the quit with a
window that names each endpoint still billing and its price, and offers Keep trying (the default,
and what the close button, Escape and Enter mean), Open on <its provider's site>, and Quit anyway, which asks
once more naming what keeps billing and until when. The window reads the live rows meanwhile and
goes on by itself when the pause lands; a stop signal or a second Quit is always answered. Quitting
never leaves a bill silently. ``Phase`` and ``Exit`` are the states and the ways out.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices, QGuiApplication, QKeyEvent, QSessionManager
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.services.api import glossary
from app.services.errors import NotFound
from app.services.platform.session_end import block_shutdown
from app.ui import providers
from app.ui.aio import error_text
from app.ui.dialogs import confirm_box
from app.ui.facade import NodeFacade
from app.ui.resources import app_icon
from app.ui.sizing import grow_to_fit, screen_width

PAUSE_TIMEOUT_S = 15.0  # one attempt; the user decides what happens after it


@dataclass
class StillBilling:
    name: str
    price_per_hour: float | None
    endpoint: str | None
    why: str
    simulated: bool = False
    provider: str | None = None  # the row's provider id: its name, its site and what ends its billing

    def page(self) -> str | None:
        """The endpoint's page on its provider's site, where it can be paused by hand (none when simulated)."""
        found = providers.of(self.provider)
        if found is None or found.console_url is None or not self.endpoint or self.simulated:
            return None
        return found.console_url(self.endpoint)

    def backstop(self, simulated: bool = False) -> str:
        """What ends its billing if Pairwise does not (said of the simulated provider in the demo)."""
        found = providers.of(self.provider)
        if found is None:
            return providers.GENERIC_BACKSTOP
        return found.backstop.replace(found.name, f"the simulated {found.name}") if simulated else found.backstop

    def line(self) -> str:
        where = " (simulated)" if self.simulated else ""
        return f"{self.name}{where} is still billing at {glossary.per_hour(self.price_per_hour)}: {self.why}"


class Phase(Enum):
    """Where a quit is. Only BLOCKED and CONFIRMING wait for the user; every other phase goes on by itself."""

    PAUSING = "pausing"  # asking each target's provider to pause it
    BLOCKED = "blocked"  # something still bills: Keep trying (the default), Quit anyway, Open on its site
    CONFIRMING = "confirming"  # Quit anyway was clicked: its own question, naming what keeps billing
    STOPPING = "stopping"  # the node's own stop
    DONE = "done"


class Exit(Enum):
    """How a blocked quit goes on."""

    KEEP_TRYING = "keep trying"  # the button, the close button, Escape, Enter, a "no" to the confirmation
    QUIT_ANYWAY = "quit anyway"  # the button and then the confirmation: the user chose it twice
    PAUSED_MEANWHILE = "paused meanwhile"  # the providers' live state says nothing bills any more
    SIGNAL = "signal"  # a stop signal, or a quit nobody can answer: try once more, warn, go


def still_billing(facade: NodeFacade, billing: list[StillBilling]) -> list[StillBilling]:
    """What of ``billing`` bills now, read live from the rows (which follow what the provider says):
    a pause that landed meanwhile, or an endpoint that is gone, bills no more."""
    out = []
    for item in billing:
        row = facade.rented_row(item.name)
        if row is not None and row["billing"]:
            out.append(item)
    return out


class QuitDialog(QDialog):
    """The quit's window, and the state machine of a quit that cannot pause: ``blocked`` shows what bills
    and waits in ``choose`` for one ``Exit``; the close button, Escape and Enter all mean Keep trying."""

    LIVE_MS = 400

    def __init__(self, targets: list[str], parent: QWidget | None = None, *, simulated: bool = False) -> None:
        super().__init__(parent)
        self.simulated = simulated
        self.setWindowTitle("Quitting Pairwise")
        self.setWindowIcon(app_icon())
        outer = QVBoxLayout(self)
        scroll = QScrollArea()  # what is said scrolls within the screen; the buttons below stay in reach
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(0, 0, 0, 0)
        scroll.setWidget(content)
        outer.addWidget(scroll, 1)
        self.scroller = scroll
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
        self.bar.setRange(0, 0)  # busy: a provider answers when it answers (bounded per attempt)
        layout.addWidget(self.intro)
        layout.addWidget(self.step)
        layout.addWidget(self.bar)
        buttons = QHBoxLayout()
        self.keep_trying = QPushButton("Keep trying")
        self.keep_trying.setObjectName("quitKeepTrying")
        self.open_site = QPushButton("Open on the provider's site")
        self.open_site.setObjectName("quitOpenSite")
        self.quit_anyway = QPushButton("Quit anyway…")
        self.quit_anyway.setObjectName("quitAnyway")
        for button in (self.keep_trying, self.open_site, self.quit_anyway):
            buttons.addWidget(button)
            button.setVisible(False)
            button.setAutoDefault(False)  # focus landing on a button never makes it what Enter presses
        outer.addLayout(buttons)
        self.keep_trying.setDefault(True)
        self.keep_trying.clicked.connect(lambda: self._resolve(Exit.KEEP_TRYING))
        self.quit_anyway.clicked.connect(self._confirm_quit_anyway)
        self.open_site.clicked.connect(self._open_site)
        self.phase = Phase.PAUSING if targets else Phase.STOPPING
        self.steps: list[str] = []
        self.billing: list[StillBilling] = []
        self.exits: list[Exit] = []  # every way a block was left (tests read it)
        self.opened: list[str] = []  # pages handed to the desktop (tests read it)
        self.confirmation: QMessageBox | None = None
        self.interrupted = False  # a stop signal came: nobody is there to answer any more
        self._choice: asyncio.Future[Exit] | None = None
        self._live: Callable[[], list[StillBilling]] | None = None
        self._live_timer = QTimer(self)
        self._live_timer.setInterval(self.LIVE_MS)
        self._live_timer.timeout.connect(self._check_live)
        self.setMinimumWidth(min(self.fontMetrics().averageCharWidth() * 60, screen_width(self)))

    def say(self, text: str) -> None:
        self.steps.append(text)
        self.step.setText(text)

    # -- the ways out of a block -----------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        """The close button is Keep trying; the window stays until the quit is over."""
        if self.phase is Phase.DONE:
            event.accept()
            return
        event.ignore()
        self._resolve(Exit.KEEP_TRYING)

    def reject(self) -> None:
        """Escape: Keep trying, never a way to hide the window while a bill is open."""
        self._resolve(Exit.KEEP_TRYING)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._resolve(Exit.KEEP_TRYING)  # whichever button has the focus: Enter is the safe choice
            return
        super().keyPressEvent(event)

    def interrupt(self) -> None:
        """A stop signal: the session is ending, so the quit may not wait for an answer any more."""
        self.interrupted = True
        self._resolve(Exit.SIGNAL)

    def bring_forward(self) -> None:
        """A second Quit: the window that holds the quit comes forward (and answers)."""
        self.show()
        self.raise_()
        self.activateWindow()

    def finish(self) -> None:
        self.phase = Phase.DONE
        self._live_timer.stop()
        self._close_confirmation()
        self.close()

    # -- blocked: something still bills ----------------------------------------------------------------------

    def blocked(self, billing: list[StillBilling], live: Callable[[], list[StillBilling]] | None = None) -> None:
        self.phase = Phase.BLOCKED
        self.billing = billing
        self._live = live
        self.bar.setVisible(False)
        self._show_billing(billing)
        for button in (self.keep_trying, self.quit_anyway):
            button.setVisible(True)
        sites = [b for b in billing if b.page() is not None] if not self.simulated else []
        self.open_site.setText(f"Open on {providers.names([b.provider for b in sites])}")
        self.open_site.setVisible(bool(sites))
        self.keep_trying.setFocus()
        if live is not None:
            self._live_timer.start()
        grow_to_fit(self, self.scroller)

    def _show_billing(self, billing: list[StillBilling]) -> None:
        self.intro.setText("<b>Not paused: " + ", ".join(b.name for b in billing) + "</b>")
        lines = [b.line() for b in billing]
        lines.append(f"If you quit now, {'they keep' if len(billing) > 1 else 'it keeps'} billing {self.backstop(billing)}. "
                     f"Pairwise keeps asking {providers.names([b.provider for b in billing])} meanwhile; this "
                     "window closes by itself once "
                     f"{'they are' if len(billing) > 1 else 'it is'} paused.")
        self.step.setText("\n\n".join(lines))

    def backstop(self, billing: list[StillBilling]) -> str:
        """What ends the billing if Pairwise does not: each provider's own backstop, said once."""
        said: list[str] = []
        for item in billing:
            text = item.backstop(simulated=self.simulated or item.simulated)
            if text not in said:
                said.append(text)
        return "; or ".join(said) or providers.GENERIC_BACKSTOP

    async def choose(self) -> Exit:
        loop = asyncio.get_running_loop()
        self._choice = loop.create_future()
        if self.interrupted:
            self._choice.set_result(Exit.SIGNAL)
        try:
            exit_ = await self._choice
        finally:
            self._choice = None
            self._live_timer.stop()
            self._close_confirmation()
        self.exits.append(exit_)
        return exit_

    def _resolve(self, exit_: Exit) -> None:
        if self._choice is not None and not self._choice.done():
            self._choice.set_result(exit_)

    def _check_live(self) -> None:
        """The providers' state now: what was paused meanwhile (here, on its website, by the budget) leaves
        the list, and the block ends by itself once nothing bills."""
        if self._live is None or self.phase not in (Phase.BLOCKED, Phase.CONFIRMING):
            return
        now = self._live()
        if not now:
            self._resolve(Exit.PAUSED_MEANWHILE)
        elif [b.name for b in now] != [b.name for b in self.billing]:
            self.billing = now
            self._show_billing(now)

    def _confirm_quit_anyway(self) -> None:
        """Quit anyway asks once more, naming what keeps billing and at what price; its default, Escape
        and close are Keep trying."""
        if self.phase is not Phase.BLOCKED:
            return
        self.phase = Phase.CONFIRMING
        names = ", ".join(b.name for b in self.billing)
        prices = "; ".join(f"{b.name} at {glossary.per_hour(b.price_per_hour)}" for b in self.billing)
        box, yes = confirm_box(self, "Leave it billing?", f"Quit and leave {names} billing?",
                               action="Quit, leave it billing", cancel="Keep trying", destructive=True,
                               informative=f"{prices} keeps billing {self.backstop(self.billing)}.")
        self.confirmation = box

        def answered(_code: int) -> None:
            self.confirmation = None
            if self.phase is Phase.CONFIRMING:
                self.phase = Phase.BLOCKED
                self._resolve(Exit.QUIT_ANYWAY if box.clickedButton() is yes else Exit.KEEP_TRYING)

        box.finished.connect(answered)
        box.open()

    def _close_confirmation(self) -> None:
        box, self.confirmation = self.confirmation, None
        if box is not None:
            if self.phase is Phase.CONFIRMING:
                self.phase = Phase.BLOCKED
            box.done(0)  # the question no longer stands (paused meanwhile, a signal): its answer is ignored

    def _open_site(self) -> None:
        for item in self.billing:
            url = item.page()
            if url is not None:
                self.opened.append(url)
                QDesktopServices.openUrl(QUrl(url))

    def working(self, text: str, phase: Phase = Phase.PAUSING) -> None:
        self.phase = phase
        for button in (self.keep_trying, self.open_site, self.quit_anyway):
            button.setVisible(False)
        self.bar.setVisible(True)
        self.intro.setText(text)


def pausing_text(targets: list[str]) -> str:
    return f"Pausing {', '.join(targets)} so {'they stop' if len(targets) > 1 else 'it stops'} billing…"


async def pause_for_quit(facade: NodeFacade, targets: list[str], dialog: QuitDialog) -> list[StillBilling]:
    """Pause each target at once; what could not be paused, with why. One already paused (since the quit
    began) is not paused again; one deleted on its provider bills nothing and is not waited for."""

    async def one(name: str) -> StillBilling | None:
        before = facade.rented_row(name)
        if before is None:
            return None
        window = before["stoppable"] and not before["pausable"]
        if not (before["pausable"] or before["stoppable"]):
            return None  # paused (or gone) since the quit began: nothing to say "Pausing…" about
        dialog.say(f"Cancelling {name}'s batch window…" if window else f"Pausing {name}…")
        try:
            await asyncio.wait_for(facade.rented_pause_for_exit(name), PAUSE_TIMEOUT_S)
            return None
        except NotFound:
            dialog.say(f"{name} no longer exists on {providers.display_name(before['provider'])}: nothing bills.")
            facade.waive_pause_on_exit([name])  # the node's stop does not ask again about what is gone
            return None
        except TimeoutError:
            why = f"{providers.display_name(before['provider'])} did not answer within {PAUSE_TIMEOUT_S:g} s"
        except Exception as exc:  # any refusal is shown as is: the user decides, not a log line
            title, message = error_text(exc)
            why = f"{title}: {message}"
        row = facade.rented_row(name)
        if row is not None and not row["billing"]:
            return None  # paused meanwhile (the lifecycle kept asking): the refusal is history
        return StillBilling(name, row["price_per_hour"] if row is not None else None,
                            row["endpoint"] if row is not None else None, why,
                            simulated=bool(row is not None and row["simulated"]), provider=before["provider"])

    results = await asyncio.gather(*(one(name) for name in targets))
    return [r for r in results if r is not None]


async def quit_node(facade: NodeFacade, dialog: QuitDialog, *, interactive: bool = True,
                    warn: Callable[[list[StillBilling]], None] | None = None) -> list[StillBilling]:
    """Pause, then stop; returns what was still billing when the node stopped. Not ``interactive``
    (a stop signal: the session is ending and nobody can answer) it warns and goes on. Every way out
    of a block ends with the endpoint paused, or with the user having chosen Quit anyway twice, or
    with a stop signal warned about."""
    targets = facade.pause_on_exit_targets()
    billing: list[StillBilling] = []
    while targets:
        dialog.phase = Phase.PAUSING
        billing = await pause_for_quit(facade, targets, dialog)
        if not billing:
            break
        dialog.blocked(billing, live=functools.partial(still_billing, facade, billing))
        if not interactive or dialog.interrupted:
            if warn is not None:
                warn(billing)
            break
        exit_ = await dialog.choose()
        if exit_ is Exit.PAUSED_MEANWHILE:
            billing = []
            break
        if exit_ is Exit.QUIT_ANYWAY:
            dialog.working("Quitting; " + ", ".join(b.name for b in billing) + " may still be billing.",
                           Phase.STOPPING)
            facade.waive_pause_on_exit([b.name for b in billing])
            break
        targets = [b.name for b in billing]  # Keep trying, or one last try before a signal's warning
        dialog.working(pausing_text(targets))
    if dialog.phase is not Phase.STOPPING:
        dialog.working("Stopping the node…" if not billing else dialog.intro.text(), Phase.STOPPING)

    def pausing(name: str) -> None:
        row = facade.rented_row(name)
        if row is not None and row["billing"]:  # an endpoint paused already is not "Pausing…"
            dialog.say(f"Pausing {name}…")

    unwatch = facade.watch_pause_on_exit(pausing)
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
