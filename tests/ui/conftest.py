"""UI tests: pytest-qt, offscreen, every async test on a qasync loop (the tray's own loop).

The node runs in-process on that loop with a temporary home; the simulated Hugging Face runs on
the same loop over HTTPS, its CA given to the node as an extra trust root. OS integrations are
neutralised (the Vorta lesson): notifications go to a list, never to a desktop; no tray host.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.home import Home
from app.services.bootstrap import build_node
from app.simulator import SimSettings, SimulatedHF
from app.ui.app import TrayApp
from app.ui.compose import register_providers
from app.ui.notify import Notification
from tests.support.patience import patience

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
register_providers()  # as TrayApp does at start: a view tested alone finds its providers too

# Fast simulated time: a billed minute is 0.2 s; an endpoint starts in ~0.5 s.
MINUTE_S = 0.2
SIM = {"pending_s": 0.15, "initializing_s": 0.35, "job_scheduling_s": 0.05, "minute_s": MINUTE_S}
REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"


def pytest_asyncio_loop_factories(config: Any, item: Any) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"qasync": lambda: qasync.QEventLoop(QApplication.instance() or QApplication(["pairwise-tests"]))}


async def until(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:  # noqa: ASYNC109
    """Poll on the loop (Qt events keep flowing) until ``predicate()`` is truthy; ``timeout`` is the
    ceiling on an idle machine, scaled when the machine is busy (tests/support/patience.py)."""
    loop = asyncio.get_running_loop()
    timeout = patience(timeout)
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        await asyncio.sleep(0.02)


def sim_environment(sim: SimulatedHF) -> dict[str, str]:
    return {
        "PAIRWISE_CA_FILE": str(sim.ca_file), "PAIRWISE_HF_ENDPOINTS_URL": sim.endpoints_url,
        "PAIRWISE_HF_HUB_URL": sim.hub_url, "PAIRWISE_HF_CATALOG_URL": sim.catalog_url,
        "PAIRWISE_HF_ROUTER_URL": sim.router_url, "PAIRWISE_BILLING_MINUTE_S": str(MINUTE_S),
        "PAIRWISE_HF_TIMEOUT_S": "3", "PAIRWISE_HF_BACKOFF_S": "0.05", "PAIRWISE_HF_MAX_BACKOFF_S": "0.5",
        "PAIRWISE_HF_POLL_STARTING_S": "0.03", "PAIRWISE_HF_POLL_STEADY_S": "0.1",
        "PAIRWISE_HF_STOP_TIMEOUT_S": "5", "PAIRWISE_HF_EXIT_GIVE_UP_S": "8", "PAIRWISE_MDNS": "off",
    }


@pytest.fixture
async def sim(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SimulatedHF]:
    simulated = SimulatedHF(SimSettings(**SIM))  # type: ignore[arg-type]
    await simulated.start()
    for key, value in sim_environment(simulated).items():
        monkeypatch.setenv(key, value)
    try:
        yield simulated
    finally:
        await simulated.stop()


class Sent(list[Notification]):
    def titles(self) -> list[str]:
        return [n.title for n in self]


@pytest.fixture
async def make_app(tmp_path: Path, qapp: QApplication) -> AsyncIterator[Callable[..., Any]]:
    """Start a TrayApp around an in-process node with a temporary home; quit it afterwards."""
    started: list[TrayApp] = []

    async def make(name: str = "desk", **options: Any) -> TrayApp:
        node = build_node(Home(tmp_path / f"home-{name}"), listen="127.0.0.1:0", cluster_listen="127.0.0.1:0",
                          name=name, mdns=False)
        sent = Sent()
        options.setdefault("notify_sink", sent.append)
        options.setdefault("discover_ports", [])  # the welcome window looks at no port of this machine
        app = TrayApp(node, tray_wait_s=3600, **options)
        app.sent = sent  # type: ignore[attr-defined]
        await app.start()
        started.append(app)
        return app

    yield make
    for app in started:
        if not app._done.is_set():
            await app.quit(interactive=False)  # a teardown cannot answer a dialog
        app.window.deleteLater()
        if app.wizard is not None:
            app.wizard.deleteLater()
    gc.collect()  # what a test left unfinished is reported in its own teardown, not at session end
