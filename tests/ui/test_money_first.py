"""The tray a newcomer trusts with their money: quit and cancel never leave a bill silently,
failures come before billing and keep every choice, status never contradicts itself, and a
budget pause says when it ends and how to go on. Against the simulated Hugging Face."""

from __future__ import annotations

from typing import Any

from app.simulator import SimulatedHF
from app.ui import dialogs
from app.ui.hf.wizard.state import HfPage
from app.ui.wizard.wizard import RentWizard
from tests.ui.conftest import REPO, until
from tests.ui.helpers import T4, find_action, hf, hf_facade, open_menu, running_gpu, sim_state
from tests.ui.test_wizard import open_wizard, sign_in

HF_DOWN = {"target": "management", "kind": "500", "count": 100_000}


async def hf_down(sim: SimulatedHF) -> None:
    await sim.control("POST", "/_sim/faults", HF_DOWN)


async def hf_up(sim: SimulatedHF) -> None:
    await sim.control("DELETE", "/_sim/faults")


async def test_hugging_face_unreachable_is_attention_everywhere_until_it_answers(sim: SimulatedHF,
                                                                                 make_app: Any) -> None:
    app = await make_app()
    # The endpoint's scale-to-zero (Pairwise's default 15 minutes: 3 s here) is kept out of the way: on a loaded
    # machine the test outlasts it, and an endpoint scaled to zero rightly stops showing as billing.
    await running_gpu(app, sim, scale_to_zero_min=600)
    await until(lambda: app.tray.state == "billing", what="billing")
    await hf_down(sim)
    await until(lambda: app.tray.state == "attention", what="attention while HF cannot be reached")
    menu = open_menu(app)
    assert "⚠ Can't reach Hugging Face — gpu may still be billing" in menu
    assert "Can't reach Hugging Face — gpu may still be billing" in app.tray.icon.toolTip()
    app.window.show_node("gpu")
    assert app.window.detail.fact_text("State") == "Can't reach Hugging Face (may be billing)"
    await hf_up(sim)
    await until(lambda: app.tray.state == "billing", what="billing again once HF answers")
    assert not any("Can't reach" in str(item) for item in open_menu(app))


async def test_quit_that_cannot_pause_asks_and_keep_trying_pauses(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    await hf_down(sim)
    app.request_quit()
    dialog = await until(lambda: app.quit_dialog if app.quit_dialog and app.quit_dialog.billing else None,
                         timeout=40, what="the quit window naming what still bills")
    assert not app._done.is_set()  # it does not exit silently
    assert [b.name for b in dialog.billing] == ["gpu"]
    text = dialog.step.text()
    assert "gpu (simulated) is still billing at $0.50/h" in text and "scale-to-zero" in text
    assert dialog.keep_trying.isVisible() and dialog.quit_anyway.isVisible()
    assert not dialog.open_site.isVisible()  # a simulated endpoint has no page on the real Hugging Face
    assert sim_state(sim, "gpu") in ("running", "scaledToZero")

    await hf_up(sim)
    dialog.keep_trying.click()
    await until(lambda: app._done.is_set(), timeout=40, what="quit to finish once the pause went through")
    assert sim_state(sim, "gpu") == "paused"


async def test_quit_anyway_says_what_keeps_billing(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    await hf_down(sim)
    app.request_quit()
    dialog = await until(lambda: app.quit_dialog if app.quit_dialog and app.quit_dialog.billing else None,
                         timeout=40, what="the quit window")
    dialog.quit_anyway.click()
    box = await until(lambda: dialog.confirmation, what="Quit anyway's own question")
    next(b for b in box.buttons() if b.text() == "Quit, leave it billing").click()
    await until(lambda: app._done.is_set(), timeout=40, what="quit anyway")
    assert "may still be billing" in dialog.intro.text()
    assert sim_state(sim, "gpu") in ("running", "scaledToZero")  # the user chose it, and was told


async def test_a_stop_signal_cannot_wait_for_an_answer_so_it_warns(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    await hf_down(sim)
    app.request_quit(interactive=False)
    await until(lambda: app._done.is_set(), timeout=60, what="the quit")
    assert "Still billing after Pairwise quit" in app.sent.titles()
    note = next(n for n in app.sent if n.title == "Still billing after Pairwise quit")
    assert "gpu (simulated) is still billing at $0.50/h" in note.message and note.level == "error"


async def _to_settings(app: Any, sim: SimulatedHF) -> RentWizard:
    wizard = await open_wizard(app)
    wizard.next()
    if wizard.currentId() == HfPage.SIGN_IN:
        await sign_in(wizard, sim.demo_token)
    await until(lambda: hf(wizard).model.loads >= 1, what="the catalog")
    hf(wizard).model.repo.setText(REPO)
    wizard.next()
    await until(lambda: hf(wizard).gpu.loads >= 1, what="the GPU list")
    assert hf(wizard).gpu.select("nvidia-t4", "x1", vendor="aws", region="us-east-1")
    wizard.next()
    assert wizard.currentId() == HfPage.SETTINGS
    return wizard


async def test_a_taken_name_and_no_quota_are_caught_before_billing(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim, name="taken")
    await app.facade.rented_detach("taken")  # Pairwise forgets it; the endpoint stays on HF under that name
    wizard = await _to_settings(app, sim)
    settings = hf(wizard).settings
    settings.name.setText("taken")
    settings.day.setValue(3)
    wizard.next()
    await until(lambda: not settings.busy and "already exists" in settings.status.text(), what="the name refused")
    assert wizard.currentId() == HfPage.SETTINGS
    assert "nothing is billed" in settings.status.text() and "Change the name" in settings.status.text()
    settings.name.setText("fresh")

    await sim.control("POST", "/_sim/quota", {"instanceType": "nvidia-t4", "maxAccelerators": 0})
    wizard.next()
    await until(lambda: not settings.busy and "quota" in settings.status.text(), what="the quota refused")
    assert wizard.currentId() == HfPage.SETTINGS and "Back to pick another GPU" in settings.status.text()
    assert len(sim.state.endpoints.all()) == 1  # nothing new was created (only "taken")

    wizard.back()
    assert wizard.currentId() == HfPage.GPU
    assert hf(wizard).gpu.select("nvidia-l40s", "x1", region="us-east-1")  # another GPU, as the error said
    wizard.next()
    assert settings.name.text() == "fresh" and settings.day.value() == 3  # every choice kept
    wizard.next()
    await until(lambda: wizard.currentId() == HfPage.CONFIRM, what="the confirmation")


async def _at_progress(app: Any, sim: SimulatedHF, params: dict[str, Any]) -> RentWizard:
    """The wizard renting ``params`` (an endpoint's, or a window's with ``window``), on its progress page."""
    await hf_facade(app).login(sim.demo_token)
    wizard = RentWizard(app.facade, app.tasks)
    app.wizard = wizard
    hf(wizard).choice.params = params
    wizard.setStartId(HfPage.PROGRESS)
    wizard.show()
    return wizard


async def test_cancel_after_billing_started_asks_and_pause_stops_the_bill(sim: SimulatedHF, make_app: Any) -> None:
    await sim.control("POST", "/_sim/settings", {"initializing_s": 30.0})  # stays Initializing (billed)
    app = await make_app()
    wizard = await _at_progress(app, sim, {"name": "gpu", "model": REPO, **T4})
    await until(lambda: hf(wizard).progress.billing_started(), what="the endpoint created")
    await until(lambda: sim_state(sim, "gpu") == "initializing", what="billing")
    wizard.reject()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question")
    assert wizard.isVisible()  # not closed without a question
    assert "billing has started" in box.text()
    pause = next(b for b in box.buttons() if b.text() == "Pause it")
    pause.click()
    await until(lambda: not wizard.isVisible(), what="the wizard closed")
    assert hf(wizard).cancel_choice == "pause"
    await until(lambda: sim_state(sim, "gpu") == "paused", what="paused on HF")


async def test_budget_pause_says_when_it_resets_and_raise_budget_opens_it(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await hf_facade(app).login(sim.demo_token)
    await app.facade.rented_create({"name": "gpu", "model": REPO, **T4, "budget": {"usd_per_day": 0.02}})
    await until(lambda: sim_state(sim, "gpu") == "paused", what="the budget pause")
    note = await until(lambda: next((n for n in app.sent if n.title == "gpu paused: over budget"), None),
                       what="the budget notification")
    assert "00:00 UTC" in note.message and "raise the budget" in note.message.lower()
    assert [n.title for n in app.sent].count("gpu paused: over budget") == 1

    await until(lambda: (app.facade.rented_row("gpu") or {}).get("provider_state") == "paused", what="paused here")
    open_menu(app)
    resume = find_action(app.tray.menu, "Resume")
    assert not resume.isEnabled() and "00:00 UTC" in resume.toolTip()
    find_action(app.tray.menu, "Raise budget…").trigger()
    detail = app.window.detail
    await until(lambda: app.window.isVisible() and detail.name == "gpu", what="the node's budget")
    assert "Raise the daily or monthly budget" in detail.message.text()
    assert not detail.resume_button.isEnabled() and "00:00 UTC" in detail.resume_button.toolTip()
    assert detail.fact_text("State").startswith("Over budget (paused until 00:00 UTC)")


async def test_the_icon_is_handed_to_the_tray_host_only_when_it_changes(make_app: Any, monkeypatch: Any) -> None:
    app = await make_app()
    calls: list[Any] = []
    monkeypatch.setattr(app.tray.icon, "setIcon", lambda icon: calls.append(icon))
    monkeypatch.setattr(app.tray.icon, "setToolTip", lambda text: calls.append(text))
    for _ in range(5):
        app.tray.refresh()
    assert calls == []  # nothing changed: nothing redrawn
    app.tray.state = "billing"  # pretend it showed something else
    app.tray.refresh()
    assert len(calls) == 1


async def test_failed_requests_are_listed_in_jobs_with_why(make_app: Any) -> None:
    import httpx

    app = await make_app()
    base = f"http://{app.node.frontdoor_address}"
    async with httpx.AsyncClient(timeout=30) as client:
        unknown = await client.post(f"{base}/v1/chat/completions",
                                    json={"model": "nope", "messages": [{"role": "user", "content": "hi"}]})
        bad = await client.post(f"{base}/api/chat", json={"model": "nope", "messages": "notalist"})
    assert unknown.status_code == 404 and bad.status_code == 400
    app.open_window()
    app.window.tabs.setCurrentIndex(1)
    jobs = app.window.jobs
    await until(lambda: (jobs.refresh(), jobs.history.rowCount() >= 2)[1], what="the failed requests in Jobs")
    states = [row[2] for row in jobs.cells(jobs.history)]
    assert any(s.startswith("failed: model 'nope' not found on any node") for s in states)
    assert any(s.startswith("failed: ") and "messages" in s for s in states)
    assert not app.node.jobs.list(active_only=True)  # none left queued


async def test_cancel_while_a_window_loads_offers_stop_not_pause(sim: SimulatedHF, make_app: Any) -> None:
    await sim.control("POST", "/_sim/settings", {"job_loading_s": 30.0})  # stays loading (billed)
    app = await make_app()
    wizard = await _at_progress(app, sim, {"name": "batch", "model": REPO, "gpu": "l4x1", "window": "1h"})
    await until(lambda: hf(wizard).progress.billing_started(), what="the job started")
    wizard.reject()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question")
    assert sorted(b.text() for b in box.buttons()) == ["Don't close", "Keep it running", "Stop it"]
    assert "a later batch starts a new window" in box.informativeText()
    next(b for b in box.buttons() if b.text() == "Stop it").click()
    await until(lambda: not wizard.isVisible(), what="the wizard closed")
    assert hf(wizard).cancel_choice == "stop"
    await until(lambda: sim.state.jobs.all()[0].stage == "CANCELED", what="the job cancelled on HF")
