"""The tray's first run (issues 15 and 17): Ollama holds the front door, the welcome window shows moving it
as step one and the engines found; once Ollama has moved, the front door opens without a restart and
Ollama is adopted where it went; the found OpenAI-compatible server is adopted with a click and its
model answers through the front door. The welcome says what runs and the address, and each next step
does what it says: Pair a machine… opens the PIN invite (a second node process joins with it), Rent a
GPU… the Add rented GPU wizard, the demo's command is one the CLI takes and is copied; the tray menu's
Getting started… opens the window again."""

from __future__ import annotations

import shlex
import shutil
import socket
from pathlib import Path
from typing import Any

import httpx
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from app.cli import build_parser
from app.cli_hf.demo import run_demo, write_demo_settings
from app.home import Home
from app.services.bootstrap import build_node
from app.simulator import SimulatedHF
from app.tinymodel import TinyModelOptions, start_tiny
from app.ui import dialogs
from app.ui.app import TrayApp
from app.ui.views.pairing import InviteDialog
from app.ui.welcome import DiscoverDialog
from app.ui.wizard.wizard import Page
from tests.ui.conftest import until
from tests.ui.helpers import find_action, join_with_pin


def free_pair() -> int:
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two consecutive free ports")


async def test_first_run_with_ollama_on_the_front_door(tmp_path: Path, qapp: Any) -> None:
    port = free_pair()
    ollama_here = await start_tiny(TinyModelOptions(models=["llama3.2:latest"], api="ollama"), port=port)
    lm_studio = await start_tiny(TinyModelOptions(models=["gemma-3-4b"], api="openai"))
    node = build_node(Home(tmp_path / "home"), listen=f"127.0.0.1:{port}", cluster_listen="127.0.0.1:0",
                      name="desk", mdns=False)
    app = TrayApp(node, notify_sink=lambda _n: None, tray_wait_s=3600,
                  discover_ports=[port + 1, lm_studio.port], frontdoor_check_ms=50)
    moved = None
    try:
        await app.start()
        welcome = app.welcome
        assert welcome is not None and welcome.isVisible()
        assert not node.frontdoor_open
        assert welcome.door_box.isVisible() and welcome.door_box.title() == f"Step 1: move Ollama to 127.0.0.1:{port + 1}"
        assert f"<b>http://127.0.0.1:{port}</b> for apps that speak Ollama" in welcome.intro.text()
        assert "as soon as step 1 is done" in welcome.intro.text()
        assert welcome.pair.title() == "Step 3: pair a machine"  # moving Ollama comes first
        assert f"OLLAMA_HOST=127.0.0.1:{port + 1}" in welcome.door_text.text()
        assert f"Waiting for 127.0.0.1:{port}" in welcome.door_status.text()
        found = welcome.engines
        await until(lambda: found.looked, what="the first look")
        assert [found.list.item(i).text() for i in range(found.list.count())] == [
            f"an OpenAI-compatible server — {lm_studio.url} (openai API): gemma-3-4b"]  # not on LM Studio's port

        # The user moves Ollama to the next port: the front door opens, no restart; Ollama adopted there.
        await ollama_here.close()
        moved = await start_tiny(TinyModelOptions(models=["llama3.2:latest"], api="ollama"), port=port + 1)
        await until(lambda: node.frontdoor_open, timeout=30, what="the front door to open")
        assert node.frontdoor_address == f"127.0.0.1:{port}"
        await until(lambda: welcome.door_box.title() == "Step 1: done", what="step one done")
        assert "as soon as" not in welcome.intro.text()
        assert welcome.demo.command.text().endswith(f"demo --listen 127.0.0.1:{port + 2}")
        engines = {e["name"]: e for e in node.engines.describe()}
        assert engines["ollama"]["url"] == f"http://127.0.0.1:{port + 1}"

        # Adopt what was found; its model answers through the front door.
        await until(lambda: found.list.count() == 1 and found.adopt_button.isEnabled(), what="the second look")
        assert found.list.item(0).checkState() == Qt.CheckState.Checked
        found.adopt_button.click()
        await until(lambda: "Adopted" in found.note.text(), what="the adoption")
        async with httpx.AsyncClient(timeout=30) as client:
            for model in ("gemma-3-4b", "llama3.2:latest"):
                reply = await client.post(f"http://127.0.0.1:{port}/v1/chat/completions",
                                          json={"model": model, "messages": [{"role": "user", "content": "hi"}]})
                assert reply.status_code == 200, reply.text
                assert reply.json()["choices"][0]["message"]["content"]
        welcome.done_button.click()
        assert app.facade.welcomed()
    finally:
        if not app._done.is_set():
            await app.quit()
        for tiny in (ollama_here, lm_studio, moved):
            if tiny is not None:
                await tiny.close()
        app.window.deleteLater()


async def test_first_start_shows_the_welcome_once(make_app: Any) -> None:
    app = await make_app("solo")
    assert app.welcome is not None and app.welcome.isVisible()
    assert not app.welcome.door_box.isVisible()  # the front door opened: no step one
    await until(lambda: app.welcome.engines.looked, what="the look")
    assert "No engine found" in app.welcome.engines.note.text()
    app.welcome.close()
    assert app.facade.welcomed()


async def test_settings_discover_adopts_what_it_finds(make_app: Any) -> None:
    engine = await start_tiny(TinyModelOptions(models=["qwen2.5:0.5b"], api="ollama"))
    try:
        app = await make_app("desk", discover_ports=[engine.port])
        app.welcome.close()
        settings = app.window.settings
        settings.discover_button.click()
        dialog = settings.findChild(DiscoverDialog)
        assert dialog is not None
        panel = dialog.panel
        await until(lambda: panel.looked and panel.list.count() == 1, what="the look")
        assert panel.list.item(0).text() == f"Ollama — {engine.url} (ollama API): qwen2.5:0.5b"
        panel.adopt_button.click()
        await until(lambda: any(settings.engines.item(i).text().startswith("ollama (ollama)")
                                for i in range(settings.engines.count())), what="the engine in Settings")
        assert [e["url"] for e in app.node.engines.describe()] == [engine.url]
        dialog.accept()
    finally:
        await engine.close()


async def test_a_home_with_engines_is_not_greeted(tmp_path: Path, qapp: Any, make_app: Any) -> None:
    engine = await start_tiny(TinyModelOptions(api="ollama"))
    try:
        from app.services.backends.engines import add_engine_offline
        from app.services.cluster.identity import NodeIdentity
        from app.services.secrets import SecretStore
        from app.settings import SettingsStore

        home = Home(tmp_path / "home-old")
        home.ensure()
        store = SettingsStore(home.settings_file)
        identity = NodeIdentity.load_or_create(home.identity_dir, "old")
        add_engine_offline(store, SecretStore(identity.node_id), {"name": "ol", "url": engine.url, "api": "ollama"},
                           None)
        app = await make_app("old")
        assert app.welcome is None
    finally:
        await engine.close()


async def test_the_welcome_says_what_runs_and_where(make_app: Any) -> None:
    app = await make_app("solo")
    welcome = app.welcome
    address = app.node.frontdoor_address
    port = int(address.rpartition(":")[2])
    intro = welcome.intro.text()
    assert "Pairwise is running on this machine" in intro
    assert f"<b>http://{address}</b> for apps that speak Ollama" in intro
    assert f"<b>http://{address}/v1</b> for apps that speak OpenAI" in intro
    assert "Nothing is rented or billed until you rent a GPU yourself" in intro
    assert [box.title() for box in (welcome.pair, welcome.rent, welcome.demo)] == [
        "Step 2: pair a machine", "Step 3: rent a GPU", "Step 4: try the demo"]
    assert "simulated Hugging Face" in welcome.demo.text.text() and "nothing is billed" in welcome.demo.text.text()
    assert not app.facade.is_demo() and welcome.demo.command.isVisible()  # a real node offers the demo beside it
    # Colours come from the palette (readable on a dark theme): nothing in the window sets its own.
    assert not [w.objectName() or type(w).__name__ for w in welcome.findChildren(QWidget) if w.styleSheet()]
    # Sized from the screen and the font, within the screen.
    area = welcome.screen().availableGeometry()
    assert welcome.width() <= area.width() and welcome.height() <= area.height()
    assert welcome.width() >= welcome.fontMetrics().averageCharWidth() * 60

    # The demo's command is one this CLI takes, beside this node's front door, and copies as it is.
    command = welcome.demo.command.text()
    program, _, rest = command.partition(" demo ")
    args = build_parser().parse_args(["demo", *shlex.split(rest)])
    assert args.handler is run_demo and args.listen == f"127.0.0.1:{port + 2}" and not args.headless
    runs = shlex.split(program)
    assert shutil.which(runs[0]) is not None and (len(runs) == 1 or runs[1:] == ["-m", "app"])
    welcome.demo.button.click()
    assert QGuiApplication.clipboard().text() == command
    assert welcome.demo.button.text() == "Copied"
    await until(lambda: welcome.demo.button.text() == "Copy", what="the copy button to read Copy again")


async def test_pair_a_machine_from_the_welcome(make_app: Any, node_factory: Any) -> None:
    app = await make_app()
    other = node_factory("laptop").start()
    welcome = app.welcome
    assert welcome.pair.button.isEnabled()
    welcome.pair.button.click()
    dialog = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the invite dialog")
    assert isinstance(dialog, InviteDialog) and dialog is welcome.pair.dialog and dialog.isVisible()
    welcome.pair.button.click()  # a second click raises the same invite
    assert dialogs.ACTIVE == [dialog]
    await join_with_pin(other, dialog)
    await until(lambda: "Paired with laptop" in dialog.status.text(), what="paired")
    dialog.accept()
    await until(lambda: any(peer.get("name") == "laptop" for peer in app.facade.peers()), what="laptop paired")


async def test_rent_a_gpu_opens_the_wizard(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    welcome = app.welcome
    assert app.wizard is None and welcome.rent.button.isEnabled()
    welcome.rent.button.click()
    wizard = app.wizard
    assert wizard is not None and wizard.isVisible()
    assert wizard.windowTitle() == "Add rented GPU" and wizard.currentId() == Page.INTRO
    welcome.rent.button.click()  # one wizard at a time: the same one comes forward
    assert app.wizard is wizard
    wizard.close()


async def test_getting_started_reopens_the_welcome(make_app: Any) -> None:
    app = await make_app()
    app.welcome.done_button.click()
    assert not app.welcome.isVisible() and app.facade.welcomed()
    app.tray.rebuild()
    find_action(app.tray.menu, "Getting started…").trigger()
    await until(lambda: app.welcome.isVisible(), what="the welcome again")
    app.welcome.close()
    assert app.facade.welcomed()


async def test_inside_the_demo_the_step_says_it_is_the_demo(tmp_path: Path, sim: SimulatedHF, make_app: Any) -> None:
    """`pairwise demo`'s own tray does not offer to start the demo beside itself: it says it is the
    demo (simulated Hugging Face, nothing billed) and how to leave it."""
    home = Home(tmp_path / "home-demo")
    home.ensure()
    write_demo_settings(home, sim)  # what `pairwise demo` writes in its home before it builds the node
    app = await make_app("demo")
    assert app.facade.is_demo()
    welcome = app.welcome
    assert welcome is not None and welcome.isVisible()
    step = welcome.demo
    assert step.title() == "Step 4: this is the demo"
    text = step.text.text()
    assert "This is the demo" in text and "simulated" in text and "nothing is billed" in text
    assert "Quit in the tray menu" in text and "Ctrl-C" in text
    assert "beside this one" not in text
    assert not step.command.isVisible() and not step.button.isVisible()


async def test_no_engine_says_so_and_what_to_do_and_an_adopted_one_is_named(make_app: Any) -> None:
    app = await make_app("solo")
    found = app.welcome.engines
    await until(lambda: found.looked, what="the first look")
    note = found.note.text()
    assert "No engine found on this machine</b>, and none is adopted yet" in note
    for way in ("Look again", "move it to the next port", "Add an engine…", "rent a GPU", "try the demo"):
        assert way in note
    engine = await start_tiny(TinyModelOptions(models=["qwen2.5:0.5b"], api="ollama"))
    try:
        await app.facade.engine_add({"name": "ol", "url": engine.url, "api": "ollama"}, None)
        found.look()
        await until(lambda: "already serves" in found.note.text(), what="the look after the adoption")
        assert "through ol (1 model). No other engine found" in found.note.text()
        assert "No engine found" not in found.note.text()
    finally:
        await engine.close()
    # Add an engine… opens Settings with the cursor in the new engine's name; the welcome stays above it.
    found.add_button.click()
    window = app.window
    await until(lambda: window.isVisible() and window.tabs.currentIndex() == 2, what="Settings")
    assert window.tabs.widget(2) is window.settings
    await until(lambda: app.welcome.windowHandle().transientParent() is window.windowHandle(),
                what="the welcome kept above the main window")


async def test_the_main_window_opening_at_start_never_covers_the_welcome(make_app: Any) -> None:
    app = await make_app("solo")
    assert app.welcome.isVisible() and not app.window.isVisible()
    app._tray_deadline = 0.0  # no tray host appeared in time: the window opens instead, as on such a desktop
    app._check_tray()
    await until(lambda: app.window.isVisible(), what="the window opened")
    await until(lambda: app.welcome.windowHandle().transientParent() is app.window.windowHandle(),
                what="the welcome a transient of the main window")
    assert app.welcome.isVisible()
    app.window.hide()
    app.welcome.close()  # closed with the main window hidden: it goes, the app stays
    assert not app.welcome.isVisible() and app.facade.welcomed()
