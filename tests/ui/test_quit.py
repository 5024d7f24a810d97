"""Quit: the node's stop with pause-on-exit first, shown while it happens; the endpoint ends paused."""

from __future__ import annotations

from typing import Any

import pytest

import app.ui.app as app_module
from app.simulator import SimulatedHF
from app.ui.quitting import QuitDialog
from tests.ui.conftest import until
from tests.ui.helpers import find_action, open_menu, running_gpu, sim_state


async def test_quit_from_the_menu_pauses_the_managed_endpoint(sim: SimulatedHF, make_app: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    intros: list[str] = []

    class Recorded(QuitDialog):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            intros.append(self.intro.text())  # as first shown: the pause can end before a poll sees it

    monkeypatch.setattr(app_module, "QuitDialog", Recorded)
    app = await make_app()
    await running_gpu(app, sim)
    open_menu(app)
    runtime = app.node.home.runtime_file
    assert runtime.exists()
    find_action(app.tray.menu, "Quit").trigger()
    dialog = await until(lambda: app.quit_dialog, what="the quit window")
    assert intros == ["Pausing gpu so it stops billing…"]
    await until(lambda: app._done.is_set(), timeout=20, what="quit to finish")
    assert "Pausing gpu…" in dialog.steps and dialog.steps[-1] == "Stopped."
    assert sim_state(sim, "gpu") == "paused"
    ledger = await sim.control("GET", "/_sim/ledger")
    stretches = ledger["endpoints"][f"{sim.demo_namespace}/gpu"]["stretches"]
    assert stretches and all(s["end"] is not None for s in stretches)  # nothing is billing any more
    assert not runtime.exists() and not app.tray.icon.isVisible()


async def test_quit_leaves_an_endpoint_running_when_pause_on_exit_is_off(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim, pause_on_sponsor_exit=False)
    app.request_quit()
    await until(lambda: app._done.is_set(), timeout=20, what="quit to finish")
    assert app.quit_dialog.intro.text() == "Stopping the node…"
    assert sim_state(sim, "gpu") == "running"  # HF's own scale-to-zero remains the backstop
