"""``RentWizard``: Add rented GPU. Two paths:

    rent:   Intro → the chosen provider's pages (``app/ui/providers.py::RentPages``: sign in, model,
            GPU, settings with the cost preview, billing confirmation, progress)
    attach: Intro → Attach (URL, token, provider) → Attached

``sign_in`` (a provider's key) runs that provider's sign-in page alone (Settings → its account → Sign in)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget, QWizard

from app.ui import providers
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.providers import RentPages
from app.ui.resources import app_icon
from app.ui.sizing import fit_to_screen
from app.ui.wizard.attach import AttachDonePage, AttachPage
from app.ui.wizard.intro import IntroPage
from app.ui.wizard.state import Page

__all__ = ["Page", "RentWizard"]


class RentWizard(QWizard):
    Page = Page

    def __init__(self, facade: NodeFacade, tasks: Tasks, *, sign_in: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facade, self.tasks = facade, tasks
        self.sign_in_only = sign_in is not None
        offering = [(p, p.rent) for p in providers.renting() if p.rent is not None and sign_in in (None, p.key)]
        self.rent_pages: dict[str, RentPages] = {p.key: rent.pages(facade, tasks, self.sign_in_only)
                                                 for p, rent in offering}
        signing_in = providers.by_key(sign_in) if sign_in is not None else None
        title = signing_in.rent.sign_in_title if signing_in is not None and signing_in.rent is not None else ""
        self.setWindowTitle(title or ("Sign in" if self.sign_in_only else "Add rented GPU"))
        self.setWindowIcon(app_icon())
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        fit_to_screen(self, width_chars=92, height_lines=34)
        self.intro = IntroPage([(p, self.rent_pages[p.key].first_id) for p, _rent in offering])
        self.attach = AttachPage(facade, tasks)
        self.attach_done = AttachDonePage()
        for page_id, page in ((Page.INTRO, self.intro), (Page.ATTACH, self.attach),
                              (Page.ATTACH_DONE, self.attach_done)):
            self.setPage(page_id, page)
        for pages in self.rent_pages.values():
            pages.install(self)
        if sign_in is not None and sign_in in self.rent_pages:
            self.setStartId(self.rent_pages[sign_in].sign_in_id)
        else:
            self.setStartId(Page.INTRO)
        if facade.is_demo():
            self.mark_simulated()

    def mark_simulated(self) -> None:
        """The demo's wizard says on every page that speaks of a provider or of billing that both are
        simulated: no account is used and no money is spent."""
        self.setWindowTitle(f"{self.windowTitle()} (simulated)")
        for provider in providers.renting():
            if provider.key in self.rent_pages and provider.rent is not None:
                self.intro.rent_button(provider.key).setText(provider.rent.simulated_label)
        for pages in self.rent_pages.values():
            pages.mark_simulated()

    def done(self, result: int) -> None:
        for pages in self.rent_pages.values():
            pages.cleanup()
        super().done(result)

    def reject(self) -> None:
        """Cancel (or the window's close) once billing has started: the provider's pages ask first."""
        if any(pages.holds_close() for pages in self.rent_pages.values()):
            return
        super().reject()
