"""Shared steps for UI tests: a running rented GPU on the simulated Hugging Face, a PIN join, menu texts."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from app.harness import REPO as REPO_DIR
from app.harness import child_env
from app.services.rented.decl import OLDER_SPELLINGS
from app.simulator import SimulatedHF
from app.ui.hf.facade import HfFacade
from app.ui.hf.provider import KEY as HF
from app.ui.hf.wizard.pages import HfRentPages
from tests.ui.conftest import REPO, until


def hf_facade(app: Any) -> HfFacade:
    """Hugging Face's account and look-ups, as its tray pages reach them."""
    return HfFacade(app.facade.api)


def hf(wizard: Any) -> HfRentPages:
    """Hugging Face's pages of an Add rented GPU wizard."""
    pages = wizard.rent_pages[HF]
    assert isinstance(pages, HfRentPages)
    return pages


T4 = {"gpu": "nvidia-t4", "vendor": "aws", "region": "us-east-1"}  # $0.50 per hour


def nested(settings: dict[str, Any]) -> dict[str, Any]:
    """Keyword settings (``usd_per_day=5``) as a create spells them: ``{"budget": {"usd_per_day": 5}}``."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        head, _, rest = OLDER_SPELLINGS.get(key, key).partition(".")
        if rest:
            out.setdefault(head, {})[rest] = value
        else:
            out[head] = value
    return out


async def running_gpu(app: Any, sim: SimulatedHF, name: str = "gpu", **settings: Any) -> dict[str, Any]:
    """Sign in and rent a T4 through the same service calls the wizard makes; wait until it runs."""
    if not hf_facade(app).signed_in():
        await hf_facade(app).login(sim.demo_token)
    await app.facade.rented_create({"name": name, "model": REPO, **T4, **nested(settings)})
    return await until(lambda: _running(app, name), timeout=20, what=f"{name} running")  # type: ignore[no-any-return]


def _running(app: Any, name: str) -> dict[str, Any] | None:
    row = app.facade.rented_row(name)
    return row if row and row.get("provider_state") == "running" else None


async def join_with_pin(other: Any, dialog: Any) -> None:
    """The other node (its own process) joins with the PIN and address an open invite dialog shows."""
    await until(lambda: dialog.pin.text()[:1].isdigit(), what="the PIN")
    pin = dialog.pin.text().replace(" ", "")
    address = dialog.address.text().removeprefix("Address: ")
    assert len(pin) == 6 and "good for" in dialog.status.text()
    join = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app", "--home", str(other.home), "pair", "join", address, "--pin", pin,
        cwd=REPO_DIR, env=child_env(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _out, err = await join.communicate()
    assert join.returncode == 0, err.decode()


def sim_state(sim: SimulatedHF, name: str) -> str | None:
    endpoint = sim.state.endpoints.get(sim.demo_namespace, name)
    return endpoint.state if endpoint is not None else None


def menu_texts(menu: QMenu) -> list[Any]:
    """The menu as shown: texts, '-' for separators, (text, [children]) for submenus."""
    out: list[Any] = []
    for action in menu.actions():
        if action.isSeparator():
            out.append("-")
        elif action.menu() is not None:
            sub = action.menu()
            assert isinstance(sub, QMenu)
            out.append((action.text(), menu_texts(sub)))
        else:
            out.append(action.text())
    return out


def find_action(menu: QMenu, text: str) -> QAction:
    for action in menu.actions():
        if action.text() == text:
            return action
        sub = action.menu()
        if isinstance(sub, QMenu):
            try:
                return find_action(sub, text)
            except LookupError:
                continue
    raise LookupError(text)


def open_menu(app: Any) -> list[Any]:
    app.tray.menu.aboutToShow.emit()  # what the tray host triggers when the user clicks
    return menu_texts(app.tray.menu)
