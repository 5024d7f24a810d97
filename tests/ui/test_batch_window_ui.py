"""The tray's side of batch windows: a window that fails while loading shows HF's message and its
last log lines in the node detail; removing a window cancels its job (nothing to delete on HF)."""

from __future__ import annotations

from typing import Any

from app.services.hf.providers import WINDOW_OPS
from app.simulator import SimulatedHF
from app.ui.hf.wizard.state import HfPage
from tests.ui.conftest import REPO, until
from tests.ui.helpers import find_action, hf, hf_facade, open_menu


async def test_a_window_failing_to_load_shows_its_last_log_lines(sim: SimulatedHF, make_app: Any) -> None:
    sim.state.jobs.load_errors[REPO] = "CUDA out of memory loading weights"
    app = await make_app()
    await hf_facade(app).login(sim.demo_token)
    assert app.node.rented is not None
    windows = app.node.rented.providers.get(WINDOW_OPS)
    assert windows is not None
    await windows.create({"name": "batch", "model": REPO, "gpu": "l4x1", "window": "1h"})
    await until(lambda: (app.facade.rented_row("batch") or {}).get("last_log_lines"), timeout=20,
                what="the load error's log lines")
    app.open_window()
    app.window.show_node("batch")
    detail = app.window.detail
    assert "CUDA out of memory loading weights" in (detail.fact_text("Hugging Face says") or "")
    assert "RuntimeError: CUDA out of memory loading weights" in (detail.fact_text("Last log lines") or "")
    assert (detail.fact_text("Batch window") or "").startswith("ERROR; Hugging Face ends it by")
    assert detail.delete_button.text() == "Remove from Pairwise…"


async def test_the_wizard_rents_a_batch_window(sim: SimulatedHF, make_app: Any) -> None:
    from tests.ui.test_wizard import open_wizard, sign_in

    app = await make_app()
    wizard = await open_wizard(app)
    wizard.next()
    await sign_in(wizard, sim.demo_token)
    hf(wizard).model.repo.setText(REPO)
    wizard.next()

    gpu = hf(wizard).gpu
    assert wizard.currentId() == HfPage.GPU
    await until(lambda: gpu.loads >= 1, what="the endpoint GPUs")
    kind = gpu.kind
    assert kind.buttons["endpoint"].text() == "Endpoint (pause and resume, scales to zero)"
    assert kind.buttons["window"].text() == "Batch window (fixed time, hard stop)"
    assert not kind.hours.isVisibleTo(gpu)  # an endpoint has no window
    kind.buttons["window"].setChecked(True)
    await until(lambda: gpu.loads >= 2, what="the Jobs flavors")
    assert kind.hours.isVisibleTo(gpu) and all(r["region"] == "Jobs" for r in gpu.rows)
    assert gpu.select("l4x1")
    kind.hours.setValue(2)
    assert kind.preview.text() == ("2 h window on l4x1: $1.62 ($0.80/h GPU + $0.01/h port), billed per minute; "
                                   "Hugging Face stops it at the end.")
    wizard.next()

    settings = hf(wizard).settings
    assert settings.policy.currentData() == "prefer"  # a window is rented to be used first
    assert settings.pause_on_exit.text() == "Cancel it when Pairwise quits"
    assert not settings.wake.isVisibleTo(settings)
    settings.name.setText("batch")
    settings.month.setValue(0)
    assert settings.preview.text().startswith("2 h window on l4x1: $1.62")
    assert "your $10.00/day cap pays for 12.3 h" in settings.preview.text()
    wizard.next()
    await until(lambda: wizard.currentId() == HfPage.CONFIRM, what="the window's plan")

    summary = hf(wizard).confirm.summary.text()
    assert "$1.62 for the whole window" in summary and "120 min at $0.81/h" in summary
    assert "<b>cancel</b> the job" in summary and "even if this machine is off" in summary
    assert "token-protected port (never public)" in summary
    assert sim.state.jobs.all() == []  # nothing rented before the commit
    hf(wizard).confirm.agree.setChecked(True)
    wizard.next()

    progress = hf(wizard).progress
    await until(lambda: progress.state == "running", timeout=20, what="the window to run")
    assert progress.isComplete() and "Hugging Face ends the window by" in progress.detail.text()
    jobs = sim.state.jobs.all()
    assert len(jobs) == 1 and jobs[0].spec["timeoutSeconds"] == 7200 and jobs[0].public_ports == []
    row = app.facade.rented_row("batch")
    assert row is not None and row["provider"] == "huggingface-job" and row["policy"] == "prefer"
    wizard.accept()


async def running_window(app: Any, sim: SimulatedHF) -> dict[str, Any]:
    await hf_facade(app).login(sim.demo_token)
    assert app.node.rented is not None
    windows = app.node.rented.providers.get(WINDOW_OPS)
    assert windows is not None
    await windows.create({"name": "batch", "model": REPO, "gpu": "l4x1", "window": "1h"})
    return await until(lambda: (r := app.facade.rented_row("batch")) and r.get("window_stage") == "RUNNING" and r,
                       timeout=20, what="the window to run")  # type: ignore[no-any-return]


def sim_stage(sim: SimulatedHF) -> str:
    return str(sim.state.jobs.all()[0].stage)


async def test_a_window_offers_stop_where_an_endpoint_offers_pause_and_resume(sim: SimulatedHF,
                                                                              make_app: Any) -> None:
    app = await make_app()
    row = await running_window(app, sim)
    assert row["billing"]
    await until(lambda: app.tray.state == "billing", what="the tray to show the window billing")
    entry = next(item for item in open_menu(app) if isinstance(item, tuple) and item[0].startswith("batch — "))
    assert entry[1][1:] == ["Stop window", "Details…", "Remove from Pairwise…"], "a Job cannot pause or resume"
    stop = find_action(app.tray.menu, "Stop window")
    assert stop.isEnabled() and "cannot be paused or resumed" in stop.toolTip()

    app.open_window()
    app.window.show_node("batch")
    detail = app.window.detail
    assert detail.stop_button.isVisibleTo(detail) and detail.stop_button.isEnabled()
    assert not detail.pause_button.isVisibleTo(detail) and not detail.resume_button.isVisibleTo(detail)

    stop.trigger()
    await until(lambda: sim_stage(sim) == "CANCELED", what="the job cancelled on Hugging Face")
    await until(lambda: not (app.facade.rented_row("batch") or {}).get("stoppable"), what="the window ended")
    open_menu(app)
    assert not find_action(app.tray.menu, "Stop window").isEnabled()
    detail.refresh()
    assert not detail.stop_button.isEnabled()


async def test_quit_cancels_a_window_instead_of_pausing_it(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_window(app, sim)
    assert app.facade.pause_on_exit_targets() == ["batch"]
    app.request_quit()
    await until(lambda: app._done.is_set(), timeout=20, what="quit to finish")
    dialog = app.quit_dialog
    assert "Cancelling batch's batch window…" in dialog.steps and dialog.steps[-1] == "Stopped."
    assert sim_stage(sim) == "CANCELED"
    assert not app.sent or "Still billing" not in " ".join(app.sent.titles())
