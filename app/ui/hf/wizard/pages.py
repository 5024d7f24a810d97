"""``HfRentPages``: Hugging Face's pages of Add rented GPU (``app/ui/wizard/wizard.py``). Its path:

    Sign in → Model → GPU (an Endpoint or a Batch window) → Settings (cost preview)
    → Confirm (billing starts now) → Progress (Initializing → Running)

``sign_in_only`` shows the sign-in page alone (Settings → Hugging Face account → Sign in). Cancel
once billing has started asks what happens to the GPU; Enter means the safe choice."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWizard

from app.ui.aio import Tasks
from app.ui.dialogs import ask
from app.ui.facade import NodeFacade
from app.ui.hf.facade import HfFacade
from app.ui.hf.wizard.choose import GpuPage, ModelPage
from app.ui.hf.wizard.configure import ConfirmPage, SettingsPage
from app.ui.hf.wizard.progress import ProgressPage
from app.ui.hf.wizard.sign_in import SignInPage
from app.ui.hf.wizard.state import Choice, HfPage


class HfRentPages:
    first_id = int(HfPage.SIGN_IN)
    sign_in_id = int(HfPage.SIGN_IN)

    def __init__(self, facade: NodeFacade, tasks: Tasks, sign_in_only: bool = False) -> None:
        self.facade, self.tasks = facade, tasks
        self.sign_in_only = sign_in_only
        self.choice = Choice()
        hf = HfFacade(facade.api)
        self.sign_in = SignInPage(hf, tasks)
        self.model = ModelPage(hf, tasks)
        self.gpu = GpuPage(facade, hf, tasks)
        self.settings = SettingsPage(facade, tasks)
        self.confirm = ConfirmPage()
        self.progress = ProgressPage(facade, tasks)
        self.wizard: QWizard | None = None
        self._asking = False
        self.cancel_choice: str | None = None  # what Cancel after billing started chose (tests read it)

    def install(self, wizard: QWizard) -> None:
        self.wizard = wizard
        for page_id, page in ((HfPage.SIGN_IN, self.sign_in), (HfPage.MODEL, self.model), (HfPage.GPU, self.gpu),
                              (HfPage.SETTINGS, self.settings), (HfPage.CONFIRM, self.confirm),
                              (HfPage.PROGRESS, self.progress)):
            page.rent_state = self
            wizard.setPage(page_id, page)

    def mark_simulated(self) -> None:
        """The demo says on every page that speaks of Hugging Face or billing that both are simulated:
        no account is used and no money is spent."""
        self.sign_in.setTitle("Sign in to the simulated Hugging Face")
        self.sign_in.setSubTitle("The demo is signed in with the simulator's token: no account is used and "
                                 "nothing is billed.")
        self.confirm.setTitle("Billing starts now (simulated: no money)")
        self.confirm.agree.setText("I understand that the simulated Hugging Face counts this as billed "
                                   "(no money is spent)")

    def cleanup(self) -> None:
        self.progress.cleanupPage()  # stop polling; the endpoint itself keeps starting

    def holds_close(self) -> bool:
        """Cancel (or the window's close) once billing has started asks what happens to the GPU."""
        wizard = self.wizard
        if wizard is None or wizard.currentId() != HfPage.PROGRESS or not self.progress.billing_started() \
                or self.progress.state == "running":
            return False
        if not self._asking:
            self._asking = True
            self.tasks.spawn(self._ask_on_cancel(wizard), name="cancel after billing started",
                             on_error=lambda t, m: self.progress.detail.setText(f"{t}: {m}"))
        return True

    async def _ask_on_cancel(self, wizard: QWizard) -> None:
        name = self.progress.name or "the endpoint"
        box = QMessageBox(QMessageBox.Icon.Warning, "Billing has started",
                          f"{name} is starting on Hugging Face and billing has started.",
                          QMessageBox.StandardButton.NoButton, wizard)
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
            QWizard.reject(wizard)  # its own reject would ask again
        finally:
            self._asking = False
