"""`pairwise pair ...` and `pairwise peers ...`: joining nodes into one cluster."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import TYPE_CHECKING
from urllib.parse import quote

from app.cli_common import home_of, print_json, table
from app.control_client import ControlClient
from app.services.text_safety import printable as clean

if TYPE_CHECKING:
    from app.cli_common import Commands

JOIN_TIMEOUT_S = 45.0  # the node gives the exchange 30 s


def register(sub: Commands) -> None:
    pair: argparse.ArgumentParser = sub.add_parser("pair", help="pair nodes by PIN; list or remove paired nodes")
    psub = pair.add_subparsers(dest="pair_command", required=True)
    invite = psub.add_parser("invite", help="show a six-digit PIN another node can join with")
    invite.add_argument("--json", action="store_true", help='print {"pin", "address", "expires_at"}')
    invite.add_argument("--wait", action="store_true", help="wait until a node has joined")
    invite.add_argument("--ttl", type=float, default=300.0, metavar="SECONDS",
                        help="how long the PIN is valid (default and at most 300)")
    join = psub.add_parser("join", help="join the node that showed a PIN")
    join.add_argument("address", metavar="HOST[:PORT]", help="the address 'pair invite' printed")
    join.add_argument("--pin", required=True)
    join.add_argument("--json", action="store_true")
    status = psub.add_parser("status", help="the state of this node's invite")
    status.add_argument("--json", action="store_true")
    psub.add_parser("cancel", help="void this node's pending invite")
    plist = psub.add_parser("list", help="paired nodes")
    plist.add_argument("--json", action="store_true")
    remove = psub.add_parser("remove", help="unpair a node (it stops trusting this one too)")
    remove.add_argument("node", help="node name, id or id prefix")
    remove.add_argument("--json", action="store_true")
    pair.set_defaults(handler=cmd_pair)

    peers: argparse.ArgumentParser = sub.add_parser("peers", help="where paired nodes are (without mDNS)")
    qsub = peers.add_subparsers(dest="peers_command", required=True)
    add = qsub.add_parser("add", help="tell this node where a paired node's cluster port is")
    add.add_argument("address", metavar="HOST:PORT")
    add.add_argument("--json", action="store_true")
    qlist = qsub.add_parser("list")
    qlist.add_argument("--json", action="store_true")
    peers.set_defaults(handler=cmd_peers)


def _local_time(iso: str) -> str:
    try:
        return dt.datetime.fromisoformat(iso).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return iso


def cmd_pair(args: argparse.Namespace) -> int:
    client = ControlClient(home_of(args))
    command = args.pair_command
    if command == "invite":
        made = client.call("POST", "/pair/invite", {"ttl_s": args.ttl})
        if args.json:
            print(json.dumps(made), flush=True)
        else:
            pin = made["pin"]
            print(f"PIN {pin[:3]} {pin[3:]}  (valid until {_local_time(made['expires_at'])}, single use)")
            print("On the other node run:")
            print(f"  pairwise pair join {made['address']} --pin {pin}", flush=True)
        if args.wait:
            if not args.json:
                print("waiting for the other node to join...", flush=True)
            joined = client.call("POST", "/pair/wait", {}, timeout_s=args.ttl + 30)["paired"]
            if args.json:
                print(json.dumps({"paired": joined}), flush=True)
            else:
                print(f"paired with {joined['name']} ({joined['id']})")
        return 0
    if command == "join":
        joined = client.call("POST", "/pair/join", {"address": args.address, "pin": args.pin},
                             timeout_s=JOIN_TIMEOUT_S)["paired"]
        if args.json:
            print_json(joined)
        else:
            print(f"paired with {joined['name']} ({joined['id']}) at {joined['address'] or 'an unknown address'}")
        return 0
    if command in ("status", "cancel"):
        state = client.call("GET" if command == "status" else "DELETE", "/pair/invite")
        if getattr(args, "json", False):
            print_json(state)
        else:
            line = f"invite: {state['state']}"
            if state["state"] == "pending":
                line += (f" on {state['address']} until {_local_time(state['expires_at'])}"
                         f" ({state.get('wrong_tries', 0)} wrong tries so far)")
            elif state.get("joined"):
                line += f" by {state['joined']['name']} ({state['joined']['id']})"
            elif state["state"] == "void":
                line += (f": voided by wrong PINs from {', '.join(map(clean, state.get('voided_by') or [])) or 'an unknown address'}"
                         "; start another with 'pairwise pair invite'")
            print(line)
        return 0
    if command == "list":
        data = client.call("GET", "/pair")
        if args.json:
            print_json(data["peers"])
            return 0
        rows = [[p["name"], p["id"], p["address"] or "-", "online" if p["online"] else "offline",
                 p["paired_at"][:19]] for p in data["peers"]]
        print(table(rows, ["NAME", "ID", "ADDRESS", "STATE", "PAIRED"]) if rows else "no paired nodes")
        for pending in data.get("pending_notices") or []:
            print(f"(removed {pending['name']} has not been told yet; it will be when it can be reached)")
        return 0
    result = client.call("DELETE", f"/pair/{quote(args.node, safe='')}")
    if args.json:
        print_json(result)
    else:
        print(f"removed {result['removed']['name']}; {result['other_side']}")
    return 0


def cmd_peers(args: argparse.Namespace) -> int:
    client = ControlClient(home_of(args))
    if args.peers_command == "add":
        result = client.call("POST", "/peers", {"address": args.address})
        if args.json:
            print_json(result)
        elif result["found"]:
            found = result["found"]
            print(f"{found['name']} ({found['id']}) answers at {result['address']}")
        else:
            print(f"no paired node answers at {result['address']} yet; this node keeps trying it "
                  "for paired nodes that are offline")
        return 0
    data = client.call("GET", "/peers")
    if args.json:
        print_json(data)
        return 0
    rows = [[p["name"], p["id"][:8], p["address"] or "-", "online" if p["online"] else "offline",
             p.get("error") or ""] for p in data["peers"]]
    print(table(rows, ["NAME", "ID", "ADDRESS", "STATE", ""]) if rows else "no paired nodes")
    if data.get("manual"):
        print("addresses added by hand: " + ", ".join(data["manual"]))
    return 0
