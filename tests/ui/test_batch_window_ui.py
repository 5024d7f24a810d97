"""The tray's side of batch windows: a window that fails while loading shows HF's message and its
last log lines in the node detail; removing a window cancels its job (nothing to delete on HF)."""

from __future__ import annotations

from typing import Any

from app.simulator import SimulatedHF
from tests.ui.conftest import REPO, until


async def test_a_window_failing_to_load_shows_its_last_log_lines(sim: SimulatedHF, make_app: Any) -> None:
    sim.state.jobs.load_errors[REPO] = "CUDA out of memory loading weights"
    app = await make_app()
    await app.facade.hf_login(sim.demo_token)
    assert app.node.hf_jobs is not None
    await app.node.hf_jobs.create({"name": "batch", "model": REPO, "gpu": "l4x1", "window": "1h"})
    await until(lambda: (app.facade.rented_row("batch") or {}).get("last_log_lines"), timeout=20,
                what="the load error's log lines")
    app.open_window()
    app.window.show_node("batch")
    detail = app.window.detail
    assert "CUDA out of memory loading weights" in (detail.fact_text("Hugging Face says") or "")
    assert "RuntimeError: CUDA out of memory loading weights" in (detail.fact_text("Last log lines") or "")
    assert (detail.fact_text("Batch window") or "").startswith("ERROR; Hugging Face ends it by")
    assert detail.delete_button.text() == "Remove from Pairwise…"
