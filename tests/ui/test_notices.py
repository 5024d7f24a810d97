"""Money notices are never lost where the desktop drops tray messages: on macOS (the OS call faked, as
the rest of the platform layer is) the permission is asked at the first rented GPU; refused, a budget
pause on the simulated Hugging Face is shown in the app's own window too, whose Open leads to the
budget. Where notifications are allowed (and on Linux) no window opens."""

from __future__ import annotations

from typing import Any

import pytest

from app.services.platform import notifications
from app.simulator import SimulatedHF
from app.ui.notices import MONEY_KINDS
from tests.ui.conftest import REPO, until
from tests.ui.helpers import T4, hf_facade, running_gpu, sim_state


def test_only_macos_needs_the_permission_and_a_python_that_cannot_ask_says_unknown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert notifications.permission() == "allowed" and notifications.request() == "allowed"  # Linux: no asking
    monkeypatch.setattr(notifications, "current_platform", lambda: "darwin")
    # The real macOS path, here without PyObjC's UserNotifications (as an unbundled Python on a Mac).
    assert notifications.permission() == "unknown" and notifications.request() == "unknown"

    def broken() -> notifications.Permission:
        raise OSError("the notification center did not answer")

    monkeypatch.setattr(notifications, "_macos_status", broken)
    assert notifications.permission() == "unknown"  # never a crash in the tray


@pytest.fixture
def macos(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """macOS, with the Notification Center's answers faked: ``answer`` is what the user chose."""
    fake: dict[str, Any] = {"answer": "denied", "asked": 0}

    def request() -> str:
        fake["asked"] += 1
        return str(fake["answer"])

    monkeypatch.setattr(notifications, "current_platform", lambda: "darwin")
    monkeypatch.setattr(notifications, "_macos_request", request)
    monkeypatch.setattr(notifications, "_macos_status", lambda: fake["answer"])
    return fake


async def rent_over_budget(app: Any, sim: SimulatedHF) -> None:
    await hf_facade(app).login(sim.demo_token)
    await app.facade.rented_create({"name": "gpu", "model": REPO, **T4, "budget": {"usd_per_day": 0.02}})
    await until(lambda: sim_state(sim, "gpu") == "paused", what="the budget pause")
    await until(lambda: any(n.title == "gpu paused: over budget" for n in app.sent), what="the budget notice")


async def test_refused_on_macos_the_budget_pause_is_shown_in_a_window(sim: SimulatedHF, make_app: Any,
                                                                     macos: dict[str, Any]) -> None:
    app = await make_app()
    assert macos["asked"] == 0  # nothing rented yet: nothing to ask about
    await rent_over_budget(app, sim)
    assert macos["asked"] == 1 and app.delivery.asked  # at the first rented GPU, once
    window = app.notices
    await until(lambda: window.isVisible(), what="the money notices window")
    assert any(t.endswith("gpu paused: over budget\n" + next(
        n.message for n in app.sent if n.title == "gpu paused: over budget")) for t in window.texts())
    assert "macOS does not show Pairwise's notifications" in window.why.text()
    assert "System Settings → Notifications → Pairwise" in window.why.text()
    assert "Pairing" not in " ".join(window.texts())  # only money notices come here
    window.open_button.click()  # Open: the node's budget, ready to raise
    await until(lambda: app.window.isVisible() and app.window.detail.name == "gpu", what="the node's budget")
    window.dismiss_button.click()
    assert not window.isVisible() and not window.texts()


async def test_allowed_on_macos_no_window_opens(sim: SimulatedHF, make_app: Any, macos: dict[str, Any]) -> None:
    macos["answer"] = "allowed"
    app = await make_app()
    await rent_over_budget(app, sim)
    assert macos["asked"] == 1 and not app.notices.isVisible() and not app.notices.texts()


async def test_a_desktop_without_messages_gets_the_window_on_any_os(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    app.delivery.supports_messages = lambda: False  # what QSystemTrayIcon.supportsMessages says on such a desktop
    await rent_over_budget(app, sim)
    await until(lambda: app.notices.isVisible(), what="the window")
    assert "this desktop cannot show Pairwise's notifications" in app.notices.why.text()


async def test_the_permission_is_asked_when_the_first_gpu_is_rented(sim: SimulatedHF, make_app: Any,
                                                                    macos: dict[str, Any]) -> None:
    app = await make_app()
    await running_gpu(app, sim)  # no cap: no money notice yet
    await until(lambda: macos["asked"] == 1, what="the permission asked")
    assert not any(n.kind in MONEY_KINDS for n in app.sent)
    await running_gpu(app, sim, name="gpu2")
    assert macos["asked"] == 1  # once
