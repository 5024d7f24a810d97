"""The Add rented GPU wizard, end to end against the simulated Hugging Face over HTTPS."""

from __future__ import annotations

from typing import Any

from app.simulator import SimulatedHF
from app.ui.hf.wizard.state import HfPage
from app.ui.wizard.wizard import Page, RentWizard
from tests.ui.conftest import REPO, until
from tests.ui.helpers import hf, hf_facade


async def open_wizard(app: Any) -> RentWizard:
    app.open_wizard()
    wizard = app.wizard
    assert wizard is not None and wizard.isVisible()
    assert wizard.currentId() == Page.INTRO
    return wizard


async def sign_in(wizard: RentWizard, token: str) -> str:
    page = hf(wizard).sign_in
    page.token.setText(token)
    before = wizard.currentId()
    wizard.next()
    await until(lambda: not page.busy, what="the token check")
    await until(lambda: wizard.currentId() != before or "<b>" in page.status.text(), what="the check's answer")
    return page.status.text()


async def test_sign_in_errors_name_what_is_wrong(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    wizard = await open_wizard(app)
    wizard.next()
    assert wizard.currentId() == HfPage.SIGN_IN
    assert not hf(wizard).sign_in.isComplete()  # nothing typed, not signed in

    text = await sign_in(wizard, "hf_not_a_real_token")
    assert wizard.currentId() == HfPage.SIGN_IN
    assert "refused the token" in text

    await sim.control("POST", "/_sim/tokens", {"token": "hf_call_only", "user": "carol",
                                               "scoped": {"carol": ["inference.endpoints.infer.write"]}})
    text = await sign_in(wizard, "hf_call_only")
    assert wizard.currentId() == HfPage.SIGN_IN
    assert "cannot manage endpoints in carol" in text and "inference.endpoints.write" in text

    await sim.control("POST", "/_sim/tokens", {"token": "hf_nothing", "user": "dave", "scoped": {"dave": []}})
    text = await sign_in(wizard, "hf_nothing")
    assert wizard.currentId() == HfPage.SIGN_IN
    assert "inference.endpoints.write" in text and "inference.endpoints.infer.write" in text

    await sign_in(wizard, sim.demo_token)
    assert wizard.currentId() == HfPage.MODEL
    assert hf(wizard).sign_in.token.text() == ""  # the widget forgets the token once the keyring has it
    assert hf(wizard).choice.namespaces[0] == sim.demo_namespace


async def test_rent_a_gpu_end_to_end(sim: SimulatedHF, make_app: Any) -> None:
    await sim.control("POST", "/_sim/settings", {"initializing_s": 2.0})  # long enough to be seen on a busy machine
    app = await make_app()
    wizard = await open_wizard(app)
    wizard.next()
    await sign_in(wizard, sim.demo_token)
    assert wizard.currentId() == HfPage.MODEL

    model = hf(wizard).model
    await until(lambda: model.loads >= 1, what="the catalog")
    shown = [model.results.item(i).text() for i in range(model.results.count())]
    assert shown[0] == "Chat and text generation" and "Embeddings (for search, not chat)" in shown
    chat = shown[1:shown.index("Embeddings (for search, not chat)")]
    assert chat and all("parameters" in line or "size not stated" in line for line in chat)
    assert model.status.text() == "5 models in the catalog"
    model.search.setText("smollm2")
    await until(lambda: model.loads >= 2, what="the search")
    found = [model.results.item(i).text() for i in range(model.results.count())][1:]  # after the heading
    assert len(found) == 2 and all("SmolLM2" in f for f in found)
    assert any("135M parameters · needs about 1 GB of GPU memory" in f for f in found)
    assert not model.isComplete()
    model.results.setCurrentRow(1 + next(i for i, f in enumerate(found) if f.startswith(REPO + " ")))
    assert model.repo.text() == REPO and model.isComplete()
    wizard.next()

    gpu = hf(wizard).gpu
    assert wizard.currentId() == HfPage.GPU
    await until(lambda: gpu.loads >= 1, what="the GPU list")
    rows = {(r["instanceType"], r["instanceSize"], r["region"]): r for r in gpu.rows}
    assert all(r["accelerator"] == "gpu" for r in gpu.rows)
    assert "over quota" in rows[("nvidia-h200", "x1", "us-east-1")]["unavailable_reason"]
    assert "not available" in rows[("nvidia-l40s", "x1", "eu-west-1")]["unavailable_reason"]
    assert "deprecated" in rows[("nvidia-h100", "x1", "us-east-1")]["unavailable_reason"]
    first = [gpu.table.item(0, c).text() for c in range(gpu.table.columnCount())]
    assert first == ["1× nvidia-t4 (x1)", "16 GB", "yes", "$0.50/h", "8 of 8", "aws us-east-1", "yes"]
    # The cheapest GPU that fits the model is preselected, and why is said.
    assert gpu.selected() is not None and gpu.selected()["instanceType"] == "nvidia-t4"
    assert gpu.suggestion.text().startswith("Suggested: the cheapest GPU with enough memory — 16 GB")
    assert not gpu.select("nvidia-h200", "x1")  # listed with its reason, not selectable
    gpu.table.clearSelection()
    assert not gpu.isComplete()
    assert gpu.select("nvidia-l40s", "x1", region="us-east-1")
    wizard.next()

    settings = hf(wizard).settings
    assert wizard.currentId() == HfPage.SETTINGS
    assert settings.name.text() == "smollm2-135m-instruct"
    settings.name.setText("smol")
    settings.idle.setValue(0)
    settings.month.setValue(0)
    assert settings.preview.text() == ("2 h a day at $1.80/h = $3.60/day; your $10.00/day cap allows 5.5 h a day. "
                                       "Days and months are UTC.")
    settings.hours.setValue(3)
    settings.month.setValue(100)
    assert settings.preview.text() == ("3 h a day at $1.80/h = $5.40/day; your $10.00/day cap allows 5.5 h a day; "
                                       "your $100.00/month cap allows 55.5 h a month. Days and months are UTC.")
    settings.idle.setValue(15)
    settings.share.setChecked(True)
    wizard.next()
    await until(lambda: wizard.currentId() == HfPage.CONFIRM, what="the plan")

    confirm = hf(wizard).confirm
    summary = confirm.summary.text()
    assert "smol" in summary and REPO in summary and "nvidia-l40s x1" in summary and "$1.80/h" in summary
    assert "from the moment you click Create" in summary and "never public" in summary
    assert "$10.00/day (about 5.5 h a day)" in summary and "Idle pause after 15 min" in summary
    assert not confirm.isComplete()  # billing must be acknowledged
    assert sim.state.endpoints.all() == []  # nothing rented yet
    confirm.agree.setChecked(True)
    wizard.next()

    progress = hf(wizard).progress
    assert wizard.currentId() == HfPage.PROGRESS
    await until(lambda: progress.state == "running", timeout=20, what="Running")
    assert "initializing" in progress.seen
    assert progress.seen.index("initializing") < progress.seen.index("running")
    assert progress.isComplete() and "is running at $1.80/h" in progress.detail.text()

    endpoints = sim.state.endpoints.all()
    assert len(endpoints) == 1
    endpoint = endpoints[0]
    row = app.facade.rented_row("smol")
    assert row is not None and row["provider_state"] == "running" and row["state"] == "eligible"
    assert row["shared"] is True and row["lifecycle"]["managed"] is True
    assert row["lifecycle"]["idle_pause_min"] == 15 and row["budget"]["usd_per_day"] == 10
    assert row["models"] == [REPO] and row["endpoint"] == f"{sim.demo_namespace}/{endpoint.name}"
    wizard.accept()
    assert not wizard.isVisible()


async def test_attach_an_existing_endpoint(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await hf_facade(app).login(sim.demo_token)
    await app.facade.rented_create({"name": "first", "model": REPO, "gpu": "nvidia-t4", "vendor": "aws",
                                    "region": "us-east-1"})
    await until(lambda: (app.facade.rented_row("first") or {}).get("provider_state") == "running", what="first running")
    url = app.facade.rented_row("first")["url"]
    await app.facade.rented_detach("first")  # forget it (detach pauses a managed endpoint so it stops billing)
    # Someone runs it again on Hugging Face; the wizard attaches it by URL.
    await sim.control("POST", f"/_sim/endpoints/{sim.demo_namespace}/first/mutate", {"state": "running"})

    wizard = await open_wizard(app)
    wizard.intro.attach.setChecked(True)
    wizard.next()
    assert wizard.currentId() == Page.ATTACH
    page = wizard.attach
    page.name.setText("again")
    page.provider.setCurrentIndex(page.provider.findData("openai-compatible"))
    page.url.setText(url)
    page.token.setText("hf_wrong_token")
    wizard.next()
    await until(lambda: not page.busy and page.status.text() != page.busy_text(), what="the refusal")
    assert wizard.currentId() == Page.ATTACH and "refused" in page.status.text().lower()

    page.token.setText(sim.demo_token)
    page.gpu.setText("1x T4")
    page.price.setValue(0.5)
    wizard.next()
    await until(lambda: wizard.currentId() == Page.ATTACH_DONE, what="attached")
    summary = wizard.attach_done.summary.text()
    assert "again" in summary and "Rented · off-LAN" in summary and REPO in summary and "$0.50/h" in summary
    assert page.token.text() == ""
    assert app.facade.rented_row("again")["url"] == url
