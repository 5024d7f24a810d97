"""`pairwise demo`: a node, a simulated Hugging Face and a simulated local engine, signed in with a
demo token, so a newcomer can rent, use, pause and delete a "GPU" without an account or money.

The demo keeps its own home (default: a `demo` folder beside the real one), so it never touches
the user's real settings, keyring entries or history. Everything simulated says so.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.home import Home, resolve_home
from app.services.platform.signals import stop_event

if TYPE_CHECKING:
    from app.cli_common import Commands
    from app.services.node import Node

BANNER = """\
Pairwise demo (SIMULATED Hugging Face: no account, no money, nothing leaves this machine)

  front door          http://{listen}   (Ollama and OpenAI APIs; OpenAI base URL http://{listen}/v1)
  simulated HF        {hf}
  signed in as        {user} (simulated demo token)
  local demo engine   model '{local_model}' (a tiny simulated model)

Try, in another terminal (add --home {home}):
  pairwise --home {home} hf catalog
  pairwise --home {home} hf hardware
  pairwise --home {home} rented create demo-gpu --model HuggingFaceTB/SmolLM2-135M-Instruct --gpu nvidia-l4 --yes
  pairwise --home {home} nodes
  curl http://{listen}/v1/chat/completions -d '{{"model": "HuggingFaceTB/SmolLM2-135M-Instruct", "messages": [{{"role": "user", "content": "hi"}}]}}'
  pairwise --home {home} rented pause demo-gpu
  pairwise --home {home} rented delete demo-gpu --yes

Ctrl-C stops the demo (a running simulated GPU is paused first, as with a real one).
"""


def register(sub: Commands) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="try everything against a simulated Hugging Face (no account, no cost)")
    parser.add_argument("--listen", default=None, help="front door HOST:PORT (default 127.0.0.1:11434)")
    parser.add_argument("--cluster-listen", default="127.0.0.1:0")
    parser.add_argument("--sim-port", type=int, default=0, help="port of the simulated Hugging Face (default: any)")
    parser.add_argument("--headless", action="store_true",
                        help="the node alone, without the tray app (the default where there is no display)")
    parser.set_defaults(handler=run_demo)


def demo_home(args: argparse.Namespace) -> Home:
    if getattr(args, "home", None):
        return Home(resolve_home(args.home))
    return Home(resolve_home(None).parent / "pairwise-demo")


def run_demo(args: argparse.Namespace) -> int:
    from app.services.platform.desktop import has_display

    if not args.headless and has_display():
        return _demo_in_tray(args)
    return asyncio.run(_demo(args))


def _demo_in_tray(args: argparse.Namespace) -> int:
    """The demo in the tray app: the wizard, the window and the notifications, all for free."""
    import qasync

    from app.ui.app import application
    from app.ui.resources import app_icon

    qt_app = application()
    qt_app.setWindowIcon(app_icon())
    loop = qasync.QEventLoop(qt_app)
    asyncio.set_event_loop(loop)
    with loop:
        return int(loop.run_until_complete(_demo(args, tray=True)))


async def _demo(args: argparse.Namespace, *, tray: bool = False) -> int:
    from app.services.bootstrap import build_node
    from app.simulator.runner import SimulatedHF
    from app.simulator.settings import SimSettings
    from app.tinymodel.options import TinyModelOptions
    from app.tinymodel.server import start_tiny

    home = demo_home(args)
    home.ensure()
    sandbox(home)
    ended = forget_last_run(home)
    if ended:
        print(f"The simulated GPUs of the last demo run ({', '.join(ended)}) ended with it: the simulator keeps "
              "nothing between runs.", flush=True)
    sim = SimulatedHF(SimSettings(port=args.sim_port, state_dir=home.root / "simulator", pending_s=2.0,
                                  initializing_s=6.0))
    await sim.start()
    tiny = await start_tiny(TinyModelOptions(models=["demo-local:latest"], api="ollama", tokens_per_s=40))
    try:
        write_demo_settings(home, sim)
        node = build_node(home, listen=args.listen, cluster_listen=args.cluster_listen, name="demo", mdns=False)
        if tray:
            await _run_in_tray(node, sim, tiny, home)
        else:
            await node.start()
            try:
                await _prepare(node, sim, tiny, home)
                stop, _ = stop_event(asyncio.get_running_loop())
                await stop.wait()
                print("stopping the demo...", flush=True)
            finally:
                await node.stop()
    finally:
        await tiny.close()
        await sim.stop()
    return 0


def sandbox(home: Home) -> None:
    """The demo touches nothing of the real installation: its spend account lives in its own home (not
    the per-user one every real home shares), and its credentials (the simulator's token, worth
    nothing) stay in this process's memory, so it runs where there is no OS keyring. Its tray adds no
    login item (Settings shows none in a demo)."""
    import os

    from app.environment import reread_environment
    from app.services.rented.spend import SPEND_DIR_ENV
    from app.services.secrets import keep_in_memory

    os.environ[SPEND_DIR_ENV] = str(home.root / "spend")
    reread_environment()
    keep_in_memory()


def forget_last_run(home: Home) -> list[str]:
    """The simulator keeps nothing between runs, so the rented nodes of the last demo run are gone with
    it: forgotten here, not reported on the next start as "deleted outside Pairwise". Their jobs and
    spend stay in the demo home. Returns their names."""
    import json

    names: list[str] = []
    try:
        data = json.loads(home.rented_file.read_text(encoding="utf-8"))
        items = data.get("rented_nodes", []) if isinstance(data, dict) else []
        names = [str(item.get("name")) for item in items if isinstance(item, dict)]
    except (OSError, ValueError, AttributeError):
        pass
    for path in (home.rented_file, home.provider_file("hf_endpoints"), home.provider_file("hf_jobs")):
        path.unlink(missing_ok=True)
    return names


def write_demo_settings(home: Home, sim: Any) -> None:
    """The demo home's settings: the simulated Hugging Face's URLs and CA, marked as the demo's."""
    from app.services.hf.settings_section import HF_URLS
    from app.settings import SettingsStore

    store = SettingsStore(home.settings_file)
    settings = store.load()
    urls = HF_URLS.of(settings)
    settings.name = "demo"
    settings.mdns = False
    settings.demo = True
    settings.ca_file = str(sim.ca_file)
    urls.endpoints, urls.hub = sim.endpoints_url, sim.hub_url
    urls.catalog, urls.router = sim.catalog_url, sim.router_url
    settings.engines = [e for e in settings.engines if e.name != "demo-local"]
    store.save(settings)


async def _run_in_tray(node: Node, sim: Any, tiny: Any, home: Home) -> None:
    from app.ui.app import TrayApp

    app = TrayApp(node)
    app.install_signal_handlers()
    await app.start()
    try:
        await _prepare(node, sim, tiny, home, tray=True)
        app.open_window()  # a newcomer sees the window, with "Add rented GPU…" one click away
        await app.closed()
    finally:
        if not app.is_closed():
            await app.quit(interactive=False)


async def _prepare(node: Node, sim: Any, tiny: Any, home: Home, *, tray: bool = False) -> None:
    if node.engines.upstreams.get("demo-local") is None:
        await node.engines.add({"name": "demo-local", "url": tiny.url, "api": "ollama"}, None)
    from app.services.hf.providers import ACCOUNT
    hf = node.rented.providers.get(ACCOUNT) if node.rented is not None else None
    user = "?"
    if hf is not None:
        report = await hf.login(sim.demo_token)
        user = str(report.get("user", "?"))
    print(BANNER.format(listen=node.frontdoor_address, hf=sim.base_url, user=user, local_model="demo-local",
                        home=_quote(home.root)), flush=True)
    if tray:
        print("The tray app is open: Add rented GPU… rents a simulated GPU; Quit (or Ctrl-C) ends the demo.",
              flush=True)


def _quote(path: Path) -> str:
    text = str(path)
    return f"'{text}'" if " " in text else text
