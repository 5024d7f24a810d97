"""`pairwise settings ...`: what a person changes at run time, the same settings the tray's
Settings view changes (both go through the node's service API).

    pairwise settings [--json]              the current settings
    pairwise settings off-lan allow|deny    may prompts that start here be served off the LAN
                                            (by rented nodes)? deny keeps every prompt on the LAN
"""

from __future__ import annotations

import argparse
from typing import Any

from app.cli_common import home_of, print_json
from app.control_client import ControlClient


def register(sub: Any) -> None:
    settings: argparse.ArgumentParser = sub.add_parser("settings", help="run-time settings (off-LAN routing)")
    settings.add_argument("--json", action="store_true")
    settings.set_defaults(handler=cmd_show)
    ssub = settings.add_subparsers(dest="settings_command")
    off_lan = ssub.add_parser("off-lan", help="allow or deny prompts that start here to leave the LAN")
    off_lan.add_argument("policy", choices=["allow", "deny"])
    off_lan.add_argument("--json", action="store_true")
    off_lan.set_defaults(handler=cmd_off_lan)


def _print(settings: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(settings)
        return
    print(f"off-LAN routing: {settings['off_lan']}")


def cmd_show(args: argparse.Namespace) -> int:
    _print(ControlClient(home_of(args)).call("GET", "/settings"), args.json)
    return 0


def cmd_off_lan(args: argparse.Namespace) -> int:
    _print(ControlClient(home_of(args)).call("PUT", "/settings/off_lan", {"policy": args.policy}), args.json)
    return 0
