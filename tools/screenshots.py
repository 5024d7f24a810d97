"""Screenshots of the tray app under Xvfb, with a real tray (trayer) and the simulated Hugging Face.

    .venv/bin/python tools/screenshots.py [--out docs/screenshots] [--scale 2]

``--scale 2`` renders at Qt scale factor 2 (QT_SCALE_FACTOR) on the same 1280×800 screen, into
``docs/screenshots/scale2`` by default, to show the windows fit (and scroll) at any scale.

Without a DISPLAY it starts Xvfb and trayer itself (Debian: xvfb trayer xdotool imagemagick
libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0). Then it runs the tray app around an in-process node
with a temporary home: a tiny local engine, a Hugging Face account on the simulator, a rented GPU
created through the wizard, a few requests (local and off-LAN). It right-clicks the tray icon
with xdotool and captures the screen for the tray menu; windows and wizard pages are grabbed
from Qt. Everything it starts is stopped at the end (Quit pauses the rented GPU first).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCREEN = (1280, 800)  # a common laptop screen; at --scale 2 the same screen (640×400 logical)
SCALE = 1
REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"


# -- the X side: Xvfb, a tray host, clicks and screen captures ----------------------------------------------


@contextmanager
def x_session() -> Iterator[None]:
    """Xvfb plus trayer, unless a display is already there (then only trayer if asked)."""
    started: list[subprocess.Popen[bytes]] = []
    if not os.environ.get("DISPLAY"):
        display = f":{90 + os.getpid() % 9}"
        started.append(subprocess.Popen(["Xvfb", display, "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten",
                                         "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        os.environ["DISPLAY"] = display
        wait_for(lambda: subprocess.run(["xdpyinfo"], capture_output=True).returncode == 0
                 if shutil.which("xdpyinfo") else _x_ready(), "Xvfb")
    os.environ.pop("QT_QPA_PLATFORM", None)  # a real X server: use xcb
    started.append(subprocess.Popen(["trayer", "--edge", "top", "--align", "right", "--widthtype", "request",
                                     "--height", "28", "--transparent", "false", "--tint", "0x30343c",
                                     "--SetDockType", "true", "--expand", "true"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        yield
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()


def _x_ready() -> bool:
    return subprocess.run(["xdotool", "getdisplaygeometry"], capture_output=True).returncode == 0


def wait_for(check: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise SystemExit(f"screenshots: timed out waiting for {what}")


async def command(*args: str) -> None:
    """A tool run without blocking the loop (the app keeps painting while xdotool or import works)."""
    proc = await asyncio.create_subprocess_exec(*args)
    if await proc.wait() != 0:
        raise SystemExit(f"screenshots: {' '.join(args)} failed")


async def capture_screen(path: Path, crop: tuple[int, int, int, int] | None = None) -> None:
    """The root window (what a user sees), optionally cropped to (x, y, w, h)."""
    await command("import", "-window", "root", str(path))
    if crop:
        x, y, w, h = (v * SCALE for v in crop)  # Qt gives logical pixels; the screen has physical ones
        await command("convert", str(path), "-crop", f"{w}x{h}+{x}+{y}", "+repage", str(path))


# -- the Qt side ----------------------------------------------------------------------------------------------


async def until(predicate: Callable[[], Any], what: str, timeout: float = 120.0) -> Any:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise SystemExit(f"screenshots: timed out waiting for {what}")


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)  # let Qt lay out and paint before a grab


def show(path: Path) -> None:
    print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, flush=True)


def grab(widget: Any, path: Path) -> None:
    widget.grab().save(str(path))
    show(path)


async def run(out: Path) -> None:
    from PySide6.QtCore import QPoint

    from app.home import Home
    from app.services.bootstrap import build_node
    from app.simulator import SimSettings, SimulatedHF
    from app.tinymodel import TinyModelOptions, start_tiny
    from app.ui.aio import install_asyncgen_hooks
    from app.ui.app import TrayApp
    from app.ui.hf.wizard.pages import HfRentPages
    from app.ui.hf.wizard.state import HfPage

    install_asyncgen_hooks()
    sim = SimulatedHF(SimSettings(pending_s=0.6, initializing_s=1.5, minute_s=2.0))
    await sim.start()
    env = {"PAIRWISE_CA_FILE": str(sim.ca_file), "PAIRWISE_HF_ENDPOINTS_URL": sim.endpoints_url,
           "PAIRWISE_HF_HUB_URL": sim.hub_url, "PAIRWISE_HF_CATALOG_URL": sim.catalog_url,
           "PAIRWISE_HF_ROUTER_URL": sim.router_url, "PAIRWISE_BILLING_MINUTE_S": "2",
           "PAIRWISE_HF_POLL_STARTING_S": "0.1", "PAIRWISE_HF_POLL_STEADY_S": "0.5", "PAIRWISE_MDNS": "off"}
    os.environ.update(env)
    tiny = await start_tiny(TinyModelOptions(models=["llama3.2:1b", "qwen2.5:0.5b"], api="ollama", tokens_per_s=0))
    home = Path(tempfile.mkdtemp(prefix="pairwise-shots-"))
    node = build_node(Home(home / "home"), listen="127.0.0.1:0", cluster_listen="127.0.0.1:0", name="studio",
                      mdns=False)
    app = TrayApp(node, tray_wait_s=10, discover_ports=[tiny.port])
    try:
        await app.start()
        if app.welcome is not None:  # first start: what was found on this machine, adopted with a click
            await until(lambda: app.welcome is not None and app.welcome.engines.looked, "the welcome window's look")
            await settle()
            grab(app.welcome, out / "welcome.png")
            app.welcome.close()
        await app.facade.engine_add({"name": "ollama", "url": tiny.url, "api": "ollama"}, None)
        await until(lambda: app.tray.icon.isVisible() and not app.tray.icon.geometry().isEmpty(), "the tray icon")
        await settle(0.6)  # the tray host embeds the icon a moment after it appears

        # The wizard, page by page, ending with a rented GPU running.
        app.open_wizard()
        wizard = app.wizard
        assert wizard is not None
        pages = wizard.rent_pages["huggingface"]  # Hugging Face's pages of the wizard (app/ui/hf/wizard)
        assert isinstance(pages, HfRentPages)
        wizard.move(40, 40)
        await settle()
        grab(wizard, out / "wizard-1-start.png")
        wizard.next()
        pages.sign_in.token.setText(sim.demo_token)
        await settle()
        grab(wizard, out / "wizard-2-sign-in.png")
        wizard.next()
        try:
            await until(lambda: pages.model.loads >= 1, "the catalog")
        except SystemExit as exc:
            raise SystemExit(f"{exc} (the page says: {pages.model.status.text()})") from None
        pages.model.search.setText("smollm2")
        await until(lambda: pages.model.loads >= 2, "the catalog search")
        rows = [pages.model.results.item(i).text() for i in range(pages.model.results.count())]
        pages.model.results.setCurrentRow(next(i for i, text in enumerate(rows) if text.startswith(REPO + " ")))
        await settle()
        grab(wizard, out / "wizard-3-model.png")
        wizard.next()
        await until(lambda: pages.gpu.loads >= 1, "the GPU list")
        pages.gpu.select("nvidia-l40s", "x1", region="us-east-1")
        await settle()
        grab(wizard, out / "wizard-4-gpu.png")
        wizard.next()
        pages.settings.name.setText("l40s")
        pages.settings.month.setValue(100)
        pages.settings.share.setChecked(True)
        await settle()
        grab(wizard, out / "wizard-5-settings.png")
        wizard.next()
        await until(lambda: wizard.currentId() == HfPage.CONFIRM, "the plan")
        pages.confirm.agree.setChecked(True)
        await settle()
        grab(wizard, out / "wizard-6-confirm.png")
        wizard.next()
        await until(lambda: pages.progress.state == "initializing", "initializing")
        await settle(0.1)
        grab(wizard, out / "wizard-7-initializing.png")
        await until(lambda: pages.progress.state == "running", "running")
        await settle()
        grab(wizard, out / "wizard-8-running.png")
        wizard.accept()

        # Some work: two local requests, two that leave the LAN.
        import httpx

        async with httpx.AsyncClient(timeout=60) as client:
            base = f"http://{app.node.frontdoor_address}"
            for model in ("llama3.2:1b", "qwen2.5:0.5b"):
                await client.post(f"{base}/api/chat", json={"model": model, "stream": False,
                                                            "messages": [{"role": "user", "content": "hi"}]})
            for _ in range(2):
                await client.post(f"{base}/v1/chat/completions",
                                  json={"model": REPO, "messages": [{"role": "user", "content": "hello"}]})
        await settle(1.0)

        # The window: node list with the rented node's detail, then Jobs.
        app.open_window()
        app.window.move(20, 40)
        app.window.show_node("l40s")
        await settle(1.5)
        grab(app.window, out / "nodes.png")
        app.window.tabs.setCurrentIndex(1)
        app.window.refresh()
        await settle()
        grab(app.window, out / "jobs.png")
        app.window.tabs.setCurrentIndex(2)
        app.window.refresh()
        await settle(0.8)
        grab(app.window, out / "settings.png")
        app.window.hide()
        await settle()

        # The tray menu, opened the way a user opens it: a right click on the icon.
        rect = app.tray.icon.geometry()
        x, y = rect.center().x(), rect.center().y()
        for _attempt in range(4):  # a busy machine may embed the icon late: click again until the menu opens
            await command("xdotool", "mousemove", str(x * SCALE), str(y * SCALE), "click", "3")
            try:
                await until(lambda: app.tray.menu.isVisible(), "the tray menu", 15)
                break
            except SystemExit:
                rect = app.tray.icon.geometry()
                x, y = rect.center().x(), rect.center().y()
        else:
            raise AssertionError("the tray menu did not open")
        await settle(0.4)
        submenu_action = next(a for a in app.tray.menu.actions() if a.menu() is not None)
        sub_rect = app.tray.menu.actionGeometry(submenu_action)
        hover = app.tray.menu.mapToGlobal(QPoint(sub_rect.center().x(), sub_rect.center().y()))
        await command("xdotool", "mousemove", str(hover.x() * SCALE), str(hover.y() * SCALE))
        await until(lambda: submenu_action.menu().isVisible(), "the rented node's submenu")  # type: ignore[union-attr]
        await settle(0.4)
        menu = app.tray.menu.geometry()
        sub = submenu_action.menu().geometry()  # type: ignore[union-attr]
        left = max(0, min(menu.left(), sub.left()) - 10)
        right = min(SCREEN[0] // SCALE, max(menu.right(), sub.right(), rect.right()) + 10)
        bottom = min(SCREEN[1] // SCALE, max(menu.bottom(), sub.bottom()) + 10)
        await capture_screen(out / "tray-menu.png", (left, 0, right - left, bottom))
        show(out / "tray-menu.png")
        app.tray.menu.hide()
        await settle()

        # First run: the welcome window.
        app.open_welcome()
        if app.welcome is not None:
            app.welcome.move(40, 40)
            await settle(0.6)
            grab(app.welcome, out / "welcome.png")
            app.welcome.hide()

        # Hugging Face cannot be reached: attention everywhere, and Quit that cannot pause asks.
        await sim.control("POST", "/_sim/faults", {"target": "management", "kind": "500", "count": 100_000})
        await until(lambda: app.tray.state == "attention", "attention while HF is unreachable")
        app.open_window()
        app.window.tabs.setCurrentIndex(0)
        app.window.show_node("l40s")
        await settle(1.5)
        grab(app.window, out / "hf-unreachable.png")
        app.window.hide()
        app.request_quit()
        await until(lambda: app.quit_dialog is not None and bool(app.quit_dialog.billing), "the quit dialog", 60)
        app.quit_dialog.move(60, 60)
        await settle(0.6)
        grab(app.quit_dialog, out / "quit-still-billing.png")
        await sim.control("DELETE", "/_sim/faults")
        app.quit_dialog.keep_trying.click()
        await until(lambda: app._done.is_set(), "the quit", 60)
    finally:
        if not app._done.is_set():
            await app.quit()  # pauses the rented GPU first
        await tiny.runner.cleanup()
        await sim.stop()
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--scale", type=int, default=1, choices=(1, 2))
    args = parser.parse_args()
    global SCALE
    SCALE = args.scale
    if SCALE != 1:
        os.environ["QT_SCALE_FACTOR"] = str(SCALE)
    default = ROOT / "docs" / "screenshots" / ("scale2" if SCALE == 2 else "")
    out: Path = (args.out or default).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for tool in ("Xvfb", "trayer", "xdotool", "import", "convert"):
        if not shutil.which(tool):
            raise SystemExit(f"screenshots: {tool} is missing (apt-get install xvfb trayer xdotool imagemagick)")
    with x_session():
        import qasync

        from app.ui.app import application

        qt_app = application()
        loop = qasync.QEventLoop(qt_app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(run(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
