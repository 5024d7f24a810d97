"""``RentWizard``: Add rented GPU. Two paths:

    rent:   Intro → Sign in → Model → GPU → Settings (cost preview) → Confirm (billing starts now)
            → Progress (Initializing → Running)
    attach: Intro → Attach (URL, token, provider) → Attached

``sign_in_only`` runs the sign-in page alone (Settings → Hugging Face account → Sign in)."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget, QWizard

from app.ui.aio import Tasks
from app.ui.dialogs import ask
from app.ui.facade import NodeFacade
from app.ui.resources import app_icon
from app.ui.sizing import fit_to_screen
from app.ui.wizard.account import IntroPage, SignInPage
from app.ui.wizard.attach import AttachDonePage, AttachPage
from app.ui.wizard.choose import GpuPage, ModelPage
from app.ui.wizard.configure import ConfirmPage, SettingsPage
from app.ui.wizard.progress import ProgressPage
from app.ui.wizard.state import Choice, Page

__all__ = ["Choice", "Page", "RentWizard"]


class RentWizard(QWizard):
    Page = Page

    def __init__(self, facade: NodeFacade, tasks: Tasks, *, sign_in_only: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks = facade, tasks
        self.sign_in_only = sign_in_only
        self.choice = Choice()
        self.setWindowTitle("Sign in to Hugging Face" if sign_in_only else "Add rented GPU")
        self.setWindowIcon(app_icon())
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        fit_to_screen(self, width_chars=92, height_lines=34)
        self.intro = IntroPage()
        self.sign_in = SignInPage(facade, tasks)
        self.model = ModelPage(facade, tasks)
        self.gpu = GpuPage(facade, tasks)
        self.settings = SettingsPage(facade, tasks)
        self.confirm = ConfirmPage()
        self.progress = ProgressPage(facade, tasks)
        self.attach = AttachPage(facade, tasks)
        self.attach_done = AttachDonePage()
        for page_id, page in ((Page.INTRO, self.intro), (Page.SIGN_IN, self.sign_in), (Page.MODEL, self.model),
                              (Page.GPU, self.gpu), (Page.SETTINGS, self.settings), (Page.CONFIRM, self.confirm),
                              (Page.PROGRESS, self.progress), (Page.ATTACH, self.attach),
                              (Page.ATTACH_DONE, self.attach_done)):
            self.setPage(page_id, page)
        self.setStartId(Page.SIGN_IN if sign_in_only else Page.INTRO)
        if facade.is_demo():
            self.mark_simulated()
        self._asking = False
        self.cancel_choice: str | None = None  # what Cancel after billing started chose (tests read it)

    def mark_simulated(self) -> None:
        """The demo's wizard says on every page that speaks of Hugging Face or billing that both are
        simulated: no account is used and no money is spent."""
        self.setWindowTitle(f"{self.windowTitle()} (simulated)")
        self.intro.rent.setText("Rent a GPU on the simulated Hugging Face (nothing is billed)")
        self.sign_in.setTitle("Sign in to the simulated Hugging Face")
        self.sign_in.setSubTitle("The demo is signed in with the simulator's token: no account is used and "
                                 "nothing is billed.")
        self.confirm.setTitle("Billing starts now (simulated: no money)")
        self.confirm.agree.setText("I understand that the simulated Hugging Face counts this as billed "
                                   "(no money is spent)")

    def done(self, result: int) -> None:
        self.progress.cleanupPage()  # stop polling; the endpoint itself keeps starting
        super().done(result)

    def reject(self) -> None:
        """Cancel (or the window's close) once billing has started asks what happens to the GPU."""
        if self.currentId() == Page.PROGRESS and self.progress.billing_started() and self.progress.state != "running":
            if not self._asking:
                self._asking = True
                self.tasks.spawn(self._ask_on_cancel(), name="cancel after billing started",
                                 on_error=lambda t, m: self.progress.detail.setText(f"{t}: {m}"))
            return
        super().reject()

    async def _ask_on_cancel(self) -> None:
        name = self.progress.name or "the endpoint"
        box = QMessageBox(QMessageBox.Icon.Warning, "Billing has started",
                          f"{name} is starting on Hugging Face and billing has started.",
                          QMessageBox.StandardButton.NoButton, self)
        window = self.progress.windowed  # a batch window has no pause and no endpoint to delete
        box.setInformativeText(
            "Keep it starting (it joins your cluster when it runs) or stop it (its job is cancelled on Hugging "
            "Face; billing stops; a later batch starts a new window)." if window else
            "Keep it starting (it joins your cluster when it runs), pause it (billing stops; resume it later), "
            "or delete it (billing stops; it is gone).")
        keep = box.addButton("Keep it running", QMessageBox.ButtonRole.AcceptRole)
        pause = None if window else box.addButton("Pause it", QMessageBox.ButtonRole.ActionRole)
        delete = box.addButton("Stop it" if window else "Delete it", QMessageBox.ButtonRole.DestructiveRole)
        back = box.addButton("Don't close", QMessageBox.ButtonRole.RejectRole)
        # The safe choice is what Enter means: pause (billing stops, nothing is lost); a window cannot be
        # paused and stopping loses it, so there Enter keeps the wizard open. Escape never closes it.
        for button in (keep, pause, delete, back):
            if button is not None:
                button.setAutoDefault(False)
        box.setDefaultButton(pause or back)
        box.setEscapeButton(back)
        try:
            await ask(box)
            clicked = box.clickedButton()
            if clicked is back or clicked is None:
                return
            if clicked is pause:
                self.progress.detail.setText(f"Pausing {name}…")
                await self.facade.rented_pause(name)
            elif clicked is delete and window:
                self.progress.detail.setText(f"Stopping {name}…")
                await self.facade.rented_stop(name)
            elif clicked is delete:
                self.progress.detail.setText(f"Deleting {name}…")
                await self.facade.rented_delete(name)
            self.cancel_choice = "keep" if clicked is keep else (
                "pause" if clicked is pause else "stop" if window else "delete")
            super().reject()
        finally:
            self._asking = False
