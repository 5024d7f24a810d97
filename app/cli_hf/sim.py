"""`pairwise simulator`: the simulated Hugging Face on loopback."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.cli_common import Commands


def register(sub: Commands) -> None:
    try:
        from app.simulator.cli import add_cli_arguments, run_from_args
    except ImportError:  # the simulator is optional in a packaged app
        return

    parser: argparse.ArgumentParser = sub.add_parser("simulator", help="run the simulated Hugging Face on loopback")
    add_cli_arguments(parser)
    parser.set_defaults(handler=run_from_args)
