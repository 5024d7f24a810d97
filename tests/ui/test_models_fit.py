"""Settings' Models never scrolls sideways, and shows each copy's memory at the window it runs with:
weights plus the KV cache for that many tokens, against its machine's memory, and says when a copy
does not fit (two real tiny engine processes, one with a long window)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QAbstractScrollArea

from app.ui.memory_fit import estimate
from tests.ui.conftest import until

SMALL = "qwen2.5:7b"
HUGE = "meta-llama/Llama-3.1-405B-Instruct"
DESK = {"cpus": 8, "memory_gb": 32.0, "gpus": [{"name": "NVIDIA GeForce RTX 3060", "vram_gb": 12.0}]}


def test_memory_grows_with_the_window() -> None:
    short, long = estimate(SMALL, 4096, DESK), estimate(SMALL, 131072, DESK)
    assert short is not None and long is not None
    assert short.weights_gb == long.weights_gb and long.kv_gb == 32 * short.kv_gb
    assert short.fits and not long.fits and short.where == "GPU memory" and short.have_gb == 12.0
    assert estimate("gemma-3-4b-it-q8_0", 8192) is not None and estimate("no-size-here", 8192) is None
    assert "window not known" in (estimate(SMALL, None, DESK) or short).text()
    unified = {"memory_gb": 24.0, "gpus": [{"name": "Apple silicon (unified memory)", "vram_gb": 24.0,
                                            "unified_memory": True}]}
    assert (estimate(SMALL, 8192, unified) or short).where == "memory"


async def test_models_say_each_copys_fit_at_its_window_and_never_scroll_sideways(make_app: Any,
                                                                                 tiny_factory: Any) -> None:
    small = tiny_factory("--api", "ollama", "--model", SMALL)
    huge = tiny_factory("--api", "openai", "--model", HUGE)
    app = await make_app()
    app.node.hardware = DESK  # what the hardware probe found on this desk
    await app.facade.engine_add({"name": "ol", "url": small.url, "api": "ollama", "context_window": 8192}, None)
    await app.facade.engine_add({"name": "big", "url": huge.url, "api": "openai", "context_window": 131072}, None)
    app.open_window()
    app.window.tabs.setCurrentIndex(2)
    box = app.window.settings.models_box
    await until(lambda: box.models.rowCount() == 2, what="both models")
    texts = box.texts()
    fitting = next(t for t in texts if SMALL in t)
    assert "window 8192" in fitting and "needs about" in fitting and "at 8,192 tokens" in fitting
    assert "KV cache" in fitting and "of 12 GB GPU memory" in fitting and "does not fit" not in fitting
    too_big = next(t for t in texts if HUGE in t)
    assert "big: does not fit: needs about" in too_big and "at 131,072 tokens" in too_big
    assert "its machine has 12 GB GPU memory; use a shorter window" in too_big
    # The default size: nothing in the window scrolls sideways, the long names are cut, not widened.
    await until(lambda: box.models.viewport().width() > 0, what="the table laid out")
    for area in app.window.findChildren(QAbstractScrollArea):
        if area.isVisible():
            assert area.horizontalScrollBar().maximum() == 0, area.objectName() or type(area).__name__
    header = box.models.horizontalHeader()
    assert sum(header.sectionSize(i) for i in range(header.count())) <= box.models.viewport().width()
