"""Command line of the simulator, shared by `python -m app.simulator` and `pairwise simulator`.

Prints ONE JSON line {"base_url","endpoints_url","hub_url","catalog_url","router_url","ca_file",
"demo_token","namespace"} once listening (loopback only), then serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from app.services.platform.signals import stop_event
from app.simulator.settings import SimSettings


def add_cli_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = SimSettings()
    parser.add_argument("--port", type=int, default=0, help="HTTPS port on 127.0.0.1 (0 = any free port)")
    parser.add_argument("--state-dir", type=Path, default=None,
                        help="where the generated CA and server certificate are written (default: a temp dir)")
    parser.add_argument("--minute-s", type=float, default=defaults.minute_s,
                        help="real seconds per simulated billing minute")
    parser.add_argument("--pending-s", type=float, default=defaults.pending_s)
    parser.add_argument("--initializing-s", type=float, default=defaults.initializing_s)
    parser.add_argument("--job-scheduling-s", type=float, default=defaults.job_scheduling_s)


def settings_from_args(args: argparse.Namespace) -> SimSettings:
    return SimSettings(port=args.port, state_dir=args.state_dir, minute_s=args.minute_s, pending_s=args.pending_s,
                       initializing_s=args.initializing_s, job_scheduling_s=args.job_scheduling_s)


async def _serve(settings: SimSettings) -> None:
    stop, _ = stop_event(asyncio.get_running_loop())
    from app.simulator.runner import SimulatedHF  # the server's imports only when it runs

    sim = SimulatedHF(settings)
    await sim.start()
    try:
        print(json.dumps(sim.info()), flush=True)
        await stop.wait()
    finally:
        await sim.stop()


def run_from_args(args: argparse.Namespace) -> int:
    asyncio.run(_serve(settings_from_args(args)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.simulator", description="A simulated Hugging Face.")
    add_cli_arguments(parser)
    return run_from_args(parser.parse_args(argv))
