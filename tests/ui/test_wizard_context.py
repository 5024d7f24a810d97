"""Add rented GPU: a bigger-context copy of a model this machine has (issue 23). Real widgets, the
simulated Hugging Face, a local engine (the tiny model) serving the model with a 1024-token window."""

from __future__ import annotations

from typing import Any

import httpx

from app.simulator import SimulatedHF
from app.tinymodel import TinyModelOptions, start_tiny
from app.ui.hf.wizard.state import HfPage
from tests.ui.conftest import until
from tests.ui.helpers import hf
from tests.ui.test_wizard import open_wizard, sign_in

LOCAL, REPO = "qwen2.5:7b", "Qwen/Qwen2.5-7B-Instruct"


async def test_bigger_context_copy_of_a_local_model(sim: SimulatedHF, make_app: Any) -> None:
    engine = await start_tiny(TinyModelOptions(models=[LOCAL], api="openai", context_window=1024))
    try:
        app = await make_app()
        await app.facade.engine_add({"name": "local", "url": engine.url, "api": "openai"}, None)
        await until(lambda: any(c["window"] == 1024 for c in app.facade.model_copies_like(REPO)),
                    what="the local copy's window")
        wizard = await open_wizard(app)
        wizard.next()
        await sign_in(wizard, sim.demo_token)
        hf(wizard).model.repo.setText(REPO)  # typed: any repository id
        wizard.next()

        gpu = hf(wizard).gpu
        assert wizard.currentId() == HfPage.GPU
        await until(lambda: gpu.loads >= 1, what="the GPU list")
        context = gpu.context
        # What the local copies lack: the smallest window bigger than theirs is preselected, and said.
        assert context.isVisible() and context.tokens() == 4096
        assert "qwen2.5:7b on local holds 1,024 tokens" in context.note.text()
        assert "4,096 tokens a request, 4× theirs" in context.note.text()
        assert gpu.suggestion.text().endswith("with a 4,096-token window, at $0.70/h.")
        assert gpu.selected() is not None and gpu.selected()["instanceType"] == "nvidia-l4"

        # A 128K window's KV cache does not fit a 24 GB GPU: which GPUs fit, and the price, follow.
        context.combo.setCurrentIndex(context.combo.findData(131072))
        fit_column = {gpu.table.item(r, 0).text() + " " + gpu.table.item(r, 5).text(): gpu.table.item(r, 2).text()
                      for r in range(gpu.table.rowCount())}
        assert fit_column["1× nvidia-l4 (x1) gcp us-east4"] == "too small"
        assert fit_column["1× nvidia-l40s (x1) aws us-east-1"] == "yes"
        assert gpu.selected()["instanceType"] == "nvidia-l40s"
        assert "with a 131,072-token window, at $1.80/h." in gpu.suggestion.text()
        assert context.link.isVisible() and not context.link.isChecked()  # linked only on the user's word
        assert LOCAL in context.link.text()
        context.link.setChecked(True)
        wizard.next()

        settings = hf(wizard).settings
        assert wizard.currentId() == HfPage.SETTINGS
        settings.name.setText("qwen-128k")
        wizard.next()
        await until(lambda: wizard.currentId() == HfPage.CONFIRM, what="the plan")
        summary = hf(wizard).confirm.summary.text()
        assert "Context window: <b>131,072 tokens</b>" in summary and f"one model with {LOCAL}" in summary
        assert sim.state.endpoints.all() == []  # nothing rented before the user's word
        hf(wizard).confirm.agree.setChecked(True)
        wizard.next()
        await until(lambda: hf(wizard).progress.state == "running", timeout=20, what="Running")

        endpoint = sim.state.endpoints.all()[0]
        assert endpoint.config["model"]["image"]["huggingface"]["maxTotalTokens"] == 131072
        assert sorted(next(g for g in app.facade.model_groups() if LOCAL in g)) == sorted([LOCAL, REPO])
        await until(lambda: any(c["kind"] == "rented" and c["window"] == 131072
                                for c in app.facade.model_copies_like(LOCAL) + _rented(app)),
                    what="the rented copy's window")
        # The long prompt the local copy cannot hold now goes to the new copy, under the caller's name.
        async with httpx.AsyncClient(base_url=f"http://{app.node.frontdoor_address}", timeout=30) as http:
            reply = await http.post("/v1/chat/completions", json={
                "model": LOCAL, "max_tokens": 4, "messages": [{"role": "user", "content": "hello " * 3000}]})
        assert reply.status_code == 200, reply.text
        assert reply.json()["model"] == LOCAL and "qwen-128k window 131072" in reply.headers["x-pairwise-route"]
        wizard.accept()
    finally:
        await engine.close()


def _rented(app: Any) -> list[dict[str, Any]]:
    return [c for m in app.facade.models() for c in m["copies"] if c["kind"] == "rented"]
