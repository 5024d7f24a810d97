"""`pairwise settings ...`: what a person changes at run time, the same settings the tray's
Settings view changes (both go through the node's service API).

    pairwise settings [--json]              the current settings
    pairwise settings off-lan allow|deny    may prompts that start here be served off the LAN
                                            (by rented nodes)? deny keeps every prompt on the LAN
    pairwise settings peer-rented [NODE --use POLICY]
                                            how this node routes to a peer's shared rented node:
                                            when-no-local-node unless raised here (prefer, overflow),
                                            or never; `--use default` forgets the rule. The sponsor's
                                            own policy is shown, never obeyed
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from app.cli_common import home_of, print_json
from app.control_client import ControlClient
from app.services.api.changes import SettingsChange
from app.services.text_safety import printable
from app.settings import PEER_RENTED_POLICIES

if TYPE_CHECKING:
    from app.cli_common import Commands


def register(sub: Commands) -> None:
    settings: argparse.ArgumentParser = sub.add_parser("settings", help="run-time settings (off-LAN routing)")
    settings.add_argument("--json", action="store_true")
    settings.set_defaults(handler=cmd_show)
    ssub = settings.add_subparsers(dest="settings_command")
    off_lan = ssub.add_parser("off-lan", help="allow or deny prompts that start here to leave the LAN")
    off_lan.add_argument("policy", choices=["allow", "deny"])
    off_lan.add_argument("--json", action="store_true")
    off_lan.set_defaults(handler=cmd_off_lan)
    peer_rented = ssub.add_parser("peer-rented", help="how this node routes to a peer's shared rented node")
    peer_rented.add_argument("node", nargs="?", help="the rented node (its name or id, as `pairwise nodes` shows it)")
    peer_rented.add_argument("--use", choices=[*PEER_RENTED_POLICIES, "default"],
                             help="the policy this node routes to it under (default: when-no-local-node)")
    peer_rented.add_argument("--json", action="store_true")
    peer_rented.set_defaults(handler=cmd_peer_rented)


def _print(settings: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(settings)
        return
    print(f"off-LAN routing: {settings['off_lan']}")


def cmd_show(args: argparse.Namespace) -> int:
    _print(ControlClient(home_of(args)).call("GET", "/settings"), args.json)
    return 0


def cmd_off_lan(args: argparse.Namespace) -> int:
    _print(ControlClient(home_of(args)).call("PATCH", "/settings", SettingsChange(off_lan=args.policy).model_dump(exclude_none=True)), args.json)
    return 0


def cmd_peer_rented(args: argparse.Namespace) -> int:
    client = ControlClient(home_of(args))
    if args.node is None:
        rows = client.call("GET", "/settings/peer_rented")["peer_rented"]
    elif args.use is None:
        print("give the policy: pairwise settings peer-rented NODE --use POLICY")
        return 2
    else:
        rows = client.call("PUT", "/settings/peer_rented", {"node": args.node, "policy": args.use})["peer_rented"]
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no peer shares a rented node")
    for row in rows:
        claimed = f" (its sponsor asks for {printable(row['sponsor_policy'])})" if row.get("sponsor_policy") else ""
        where = f" via {printable(row['via'])}" if row.get("via") else " (not seen now)"
        print(f"{printable(row.get('name') or row['id'])}{where}: {row['policy']}{claimed}")
    return 0
