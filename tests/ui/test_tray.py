"""The tray icon's states and its menu, rebuilt from live state each time it opens."""

from __future__ import annotations

from typing import Any

import httpx

from app.simulator import SimulatedHF
from tests.ui.conftest import until
from tests.ui.helpers import find_action, open_menu, running_gpu, sim_state

TAIL = ["-", "Add rented GPU…", "Open Pairwise…", "Getting started…", "-", "Quit"]


async def test_idle(make_app: Any) -> None:
    app = await make_app()
    assert app.tray.state == "idle"
    assert open_menu(app) == ["Pairwise — desk · idle", "-", "Nodes", "desk — Online · this machine · 0 models",
                              *TAIL]
    assert app.tray.icon.toolTip() == "Pairwise — desk · idle"


async def test_serving_while_a_request_is_in_flight(make_app: Any, tiny_factory: Any) -> None:
    app = await make_app()
    tiny = tiny_factory("--api", "ollama", "--model", "slow:1b", "--tokens-per-s", "20", "--reply-tokens", "400")
    await app.facade.engine_add({"name": "tiny", "url": tiny.url, "api": "ollama"}, None)
    menu = open_menu(app)
    assert "desk — Online · this machine · 1 model" in menu
    url = f"http://{app.node.frontdoor_address}/api/chat"
    body = {"model": "slow:1b", "messages": [{"role": "user", "content": "hi"}]}
    async with httpx.AsyncClient(timeout=10) as client, client.stream("POST", url, json=body) as response:
        lines = response.aiter_lines()  # kept referenced: an abandoned iterator would close the stream
        assert await lines.__anext__()
        await until(lambda: app.tray.state == "serving", what="serving")
        assert open_menu(app)[0] == "Pairwise — desk · serving 1 request"
        assert "serving 1 request" in app.tray.icon.toolTip()
        await lines.aclose()
    await until(lambda: app.tray.state == "idle", what="idle again")


async def test_billing_then_paused_from_the_menu(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    await until(lambda: app.tray.state == "billing", what="billing")
    menu = open_menu(app)
    assert menu[0].startswith("Pairwise — desk · 1 GPU billing · $0.50/h · ") and menu[0].endswith(" today")
    assert menu[1:5] == ["-", "Nodes", "desk — Online · this machine · 0 models", "-"]
    assert menu[5] == "Rented · off-LAN (simulated)"
    title, children = menu[6]
    assert title.startswith("gpu — Ready")
    assert children == ["$0.50/h · nvidia-t4 x1", "Pause", "Resume", "Details…", "Delete…"]
    assert find_action(app.tray.menu, "Pause").isEnabled()
    assert not find_action(app.tray.menu, "Resume").isEnabled()
    assert menu[7:] == TAIL
    assert app.tray.icon.toolTip().startswith("Pairwise — desk · 1 GPU billing · $0.50/h")
    assert "gpu: Ready at $0.50/h" in app.tray.icon.toolTip()

    find_action(app.tray.menu, "Pause").trigger()
    await until(lambda: sim_state(sim, "gpu") == "paused", what="paused on HF")
    await until(lambda: app.facade.rented_row("gpu")["provider_state"] == "paused", what="paused here")
    await until(lambda: app.tray.state == "idle", what="no longer billing")
    menu = open_menu(app)
    title, children = menu[6]
    assert title.startswith("gpu — Paused")
    assert not find_action(app.tray.menu, "Pause").isEnabled()
    assert find_action(app.tray.menu, "Resume").isEnabled()

    find_action(app.tray.menu, "Resume").trigger()
    await until(lambda: app.facade.rented_row("gpu")["provider_state"] in ("initializing", "running"), what="resumed")
    await until(lambda: app.tray.state == "billing", what="billing again")


async def test_attention_when_a_rented_node_fails(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim)
    await sim.control("POST", f"/_sim/endpoints/{sim.demo_namespace}/gpu/mutate",
                      {"state": "failed", "message": "CUDA out of memory"})
    await until(lambda: app.tray.state == "attention", what="attention")
    menu = open_menu(app)
    assert "⚠ gpu failed: CUDA out of memory" in menu
    assert "⚠ gpu failed" in menu  # the notification, until the user looks
    assert menu[-len(TAIL):] == TAIL
    title, children = next(m for m in menu if isinstance(m, tuple))
    assert title.startswith("gpu — Failed")
    assert find_action(app.tray.menu, "Resume").isEnabled()
    assert "gpu failed: CUDA out of memory" in app.tray.icon.toolTip()

    find_action(app.tray.menu, "Open Pairwise…").trigger()
    assert app.window.isVisible()
    assert "⚠ gpu failed" not in open_menu(app)  # seen; the failed node itself still asks for attention
    assert app.tray.state == "attention"


async def test_menu_opens_the_window_and_the_wizard(make_app: Any) -> None:
    app = await make_app()
    open_menu(app)
    find_action(app.tray.menu, "Add rented GPU…").trigger()
    assert app.wizard is not None and app.wizard.isVisible()
    find_action(app.tray.menu, "Open Pairwise…").trigger()
    assert app.window.isVisible()
    app.window.close()  # closing the window keeps the app in the tray
    assert not app.window.isVisible() and not app._done.is_set()
    assert app.tray.icon.contextMenu() is app.tray.menu
