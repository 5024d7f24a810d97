"""``pairwise`` with no command: the tray app, with the node's services on a qasync loop.

Takes the same options as ``serve`` (--home, --listen, --cluster-listen, --name). On a machine
with no display it says to run ``pairwise serve`` instead; a second start for the same home
brings the first one's window forward and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

log = logging.getLogger(__name__)

HEADLESS = ("Pairwise's tray app needs a desktop, and this machine has no display (no DISPLAY or "
            "WAYLAND_DISPLAY).\nRun the node headless instead:\n\n    pairwise serve\n")


def launch_tray(args: argparse.Namespace) -> int:
    from app.services.platform.desktop import has_display

    if not has_display():
        print(HEADLESS, file=sys.stderr, end="")
        return 2
    from app.ui.qtcompat import binding_problem

    problem = binding_problem()
    if problem:
        print(f"pairwise: {problem}", file=sys.stderr)
        return 3
    import qasync

    from app.cli_common import home_of
    from app.services.bootstrap import make_node
    from app.ui.app import TrayApp, application
    from app.ui.resources import app_icon
    from app.ui.single import SingleInstance, ask_first_to_show

    qt_app = application()
    qt_app.setWindowIcon(app_icon())
    home = home_of(args)
    single = SingleInstance(home.root)
    if not single.acquire():
        if ask_first_to_show(home.root):
            print(f"Pairwise is already running for {home.root}; its window was brought forward.")
            return 0
        print(f"Pairwise is already running for {home.root} but did not answer.", file=sys.stderr)
        return 1
    node = make_node(args)
    loop = qasync.QEventLoop(qt_app)
    asyncio.set_event_loop(loop)
    tray = TrayApp(node)

    def show_again() -> None:
        log.info("a second start asked for the window")
        tray.open_window()

    single.show_requested.connect(show_again)
    try:
        with loop:
            return int(loop.run_until_complete(tray.run()))
    finally:
        single.release()
