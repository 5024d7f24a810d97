"""The main window: node list, node detail (with Delete's confirmation), Jobs, Settings, pairing."""

from __future__ import annotations

from typing import Any

import openai
from PySide6.QtWidgets import QMessageBox

from app.simulator import SimulatedHF
from app.ui import dialogs
from app.ui.hf.wizard.state import HfPage
from app.ui.tray_model import headline
from app.ui.views.nodes import row_cells
from tests.ui.conftest import REPO, until
from tests.ui.helpers import hf, hf_facade, join_with_pin, running_gpu, sim_state


def table(widget: Any) -> list[list[str]]:
    return [[widget.item(r, c).text() for c in range(widget.columnCount())] for r in range(widget.rowCount())]


async def test_node_list_and_rented_detail(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim, usd_per_day=5, idle_pause_min=30)
    app.open_window()
    rows = table(app.window.node_list)
    assert rows[0][:3] == ["desk", "This machine", "Online"] and rows[0][3] == "no engines"
    assert rows[1] == ["gpu", "Rented · off-LAN · simulated", "Ready", "nvidia-t4 x1", REPO, "$0.50/h",
                       "Hugging Face Inference Endpoint", "desk"]
    assert app.window.node_list.horizontalHeaderItem(1).text() == "Kind"

    app.window.show_node("gpu")
    detail = app.window.detail
    assert detail.title.text() == "gpu — Rented · off-LAN (simulated Hugging Face)"
    assert detail.fact_text("State") == "Ready"
    assert detail.fact_text("Hugging Face says") == "Endpoint is ready"
    assert detail.fact_text("Used") == "Used only when no machine on your LAN has the model; only this machine uses it"
    assert detail.fact_text("Cost this session").startswith("$")
    assert detail.fact_text("Cost this month (UTC)").startswith("$")
    assert detail.fact_text("Budget") == "$5.00/day, no cap; days and months are UTC"
    assert "enforced by this sponsor (desk) for endpoint" in (detail.fact_text("Cap") or "")
    assert detail.fact_text("Idle pause") == "after 30 min without requests"
    snippet = detail.usage.toPlainText()
    assert f"http://{app.node.frontdoor_address}/v1" in snippet and f'model="{REPO}"' in snippet
    assert detail.pause_button.isEnabled() and not detail.resume_button.isEnabled()
    assert detail.delete_button.text() == "Delete…"

    detail.day_cap.setValue(7.5)
    detail.apply_settings()
    await until(lambda: app.facade.rented_row("gpu")["budget"]["usd_per_day"] == 7.5, what="the new cap")

    detail.pause_button.click()
    await until(lambda: sim_state(sim, "gpu") == "paused", what="paused")
    await until(lambda: detail.resume_button.isEnabled(), what="Resume enabled")
    assert "paused" in detail.message.text()


async def test_delete_asks_naming_what_is_lost(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    app.window.show_node("gpu")
    detail = app.window.detail

    detail.delete_button.click()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the confirmation")
    assert isinstance(box, QMessageBox) and box.text() == "Delete gpu?"
    lost = box.informativeText()
    assert "deletes the Hugging Face endpoint demo-user/gpu for good" in lost
    assert "cannot be recovered" in lost and REPO in lost and "Billing for it stops" in lost
    box.button(QMessageBox.StandardButton.Cancel).click()
    await until(lambda: not dialogs.ACTIVE, what="the dialog to close")
    assert sim_state(sim, "gpu") == "running" and app.facade.rented_row("gpu") is not None

    detail.delete_button.click()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the confirmation")
    next(b for b in box.buttons() if b.text() == "Delete").click()
    await until(lambda: sim_state(sim, "gpu") is None, what="the endpoint deleted on HF")
    await until(lambda: app.facade.rented_row("gpu") is None, what="the node forgotten")
    assert "gpu deleted" in detail.message.text()


async def test_jobs_flag_off_lan_work(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    client = openai.AsyncOpenAI(base_url=f"http://{app.node.frontdoor_address}/v1", api_key="unused", max_retries=0)
    await client.chat.completions.create(model=REPO, messages=[{"role": "user", "content": "hello"}])
    await client.close()
    app.open_window()
    app.window.tabs.setCurrentIndex(1)
    jobs = app.window.jobs

    def history() -> list[list[str]]:
        jobs.refresh()
        rows = jobs.cells(jobs.history)
        return rows if rows and rows[0][9] != "–" else []  # the cost column

    rows = await until(history, what="the job with its cost")
    started, model, state, served, off_lan, origin, requester, duration, tokens, cost, why = rows[0]
    assert (model, state, served, off_lan, origin) == (REPO, "completed", "gpu", "⚠ yes", "desk")
    assert requester and duration != "–" and "→" in tokens and "$" in cost and why
    assert jobs.active_label.text() == "Running now: nothing"


async def test_settings_off_lan_and_account(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    app.open_window()
    app.window.tabs.setCurrentIndex(2)
    settings = app.window.settings
    account = settings.account_boxes["huggingface"]  # Hugging Face's account box, as it registered it
    await until(lambda: "Not signed in" in account.status.text(), what="the account")
    account.sign_in_button.click()  # the wizard's sign-in page alone
    wizard = app.wizard
    assert wizard is not None and wizard.currentId() == HfPage.SIGN_IN and wizard.sign_in_only
    hf(wizard).sign_in.token.setText(sim.demo_token)
    wizard.next()  # on the only page: Finish checks the token, then closes the wizard
    await until(lambda: not wizard.isVisible(), what="the sign-in to finish")
    assert hf_facade(app).signed_in()
    settings.refresh()
    await until(lambda: "Signed in as demo-user" in account.status.text(), what="the account")
    assert settings.allow.isChecked()
    settings.deny.setChecked(True)
    await until(lambda: app.node.settings.off_lan == "deny", what="off-LAN denied")
    account.sign_out()
    await until(lambda: "Not signed in" in account.status.text(), what="signed out")
    assert not hf_facade(app).signed_in()


async def test_pairing_with_a_pin(make_app: Any, node_factory: Any) -> None:
    app = await make_app()
    other = node_factory("laptop").start()
    app.open_window()
    app.window.tabs.setCurrentIndex(2)
    settings = app.window.settings
    settings.invite_button.click()
    dialog = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the invite dialog")
    await join_with_pin(other, dialog)
    await until(lambda: "Paired with laptop" in dialog.status.text(), what="paired")
    assert "Paired with laptop" in app.sent.titles()
    dialog.accept()
    await until(lambda: any("laptop" in settings.peers.item(i).text() for i in range(settings.peers.count())),
                what="laptop in the peers list")
    await until(lambda: "laptop joined your cluster" in app.sent.titles(), what="peer joined")
    assert any(r["name"] == "laptop" for r in app.facade.nodes())
    assert row_cells(next(r for r in app.facade.nodes() if r["name"] == "laptop"))[1] == "LAN"


async def test_the_header_says_what_bills_in_the_tray_titles_words(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    app.open_window()
    assert not app.window.money.isVisible()  # nothing rented: no money line at all
    await running_gpu(app, sim, usd_per_day=5)
    await until(lambda: "billing" in app.window.money.text(), what="the money line")
    line = app.window.money.text()
    assert line.startswith("Rented GPUs (simulated): 1 GPU billing · $0.50/h · $")
    assert "today · caps: gpu $5.00/day" in line and app.window.money.isVisible()
    # The same words as the tray menu's title, so a rate or a spend reads alike everywhere.
    assert "1 GPU billing · $0.50/h · $" in headline(name="desk", active_jobs=0, rented=app.facade.rented())
    app.window.detail.show_node("gpu")
    app.window.detail.pause_button.click()
    await until(lambda: sim_state(sim, "gpu") == "paused", what="paused")
    await until(lambda: "nothing billing" in app.window.money.text(), what="the header after the pause")
    assert "caps: gpu $5.00/day" in app.window.money.text()
