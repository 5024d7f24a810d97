"""`pairwise keys` (named keys for callers) and `pairwise lan` (the HTTPS LAN door).

With a node running, both go through its control API, so a new or revoked key counts at once;
without one, `keys` changes the home's key store directly (the node reads it when it starts).
A new key is printed once, on stdout alone, and never again: only its SHA-256 digest is kept.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.cli_common import home_of, print_json, table
from app.control_client import ControlClient
from app.home import Home
from app.services.api.changes import NewKey
from app.services.api.snapshots import KeyListRow, KeyRow, NewKeyRow
from app.services.keys.service import KEYS_FILE
from app.services.keys.store import KeyStore

if TYPE_CHECKING:
    from app.cli_common import Commands


def register(sub: Commands) -> None:
    keys: argparse.ArgumentParser = sub.add_parser("keys", help="named keys for apps and devices (Bearer pw-...)")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    create = ksub.add_parser("create", help="make a key and print it once")
    create.add_argument("name")
    create.add_argument("--models", nargs="+", metavar="PATTERN", default=[],
                        help="models the key may use (shell patterns such as 'llama3*'); default every model")
    create.add_argument("--off-lan", choices=["allow", "deny"], default="allow",
                        help="may its requests go to rented (off-LAN) nodes")
    create.add_argument("--usd-per-day", type=float, help="spend cap on rented nodes per UTC day")
    create.add_argument("--requests-per-min", type=int, help="requests per minute to rented nodes")
    create.add_argument("--json", action="store_true")
    lst = ksub.add_parser("list", help="keys of this node (never the keys themselves)")
    lst.add_argument("--json", action="store_true")
    revoke = ksub.add_parser("revoke", help="refuse a key from now on")
    revoke.add_argument("name")
    keys.set_defaults(handler=run_keys)

    lan: argparse.ArgumentParser = sub.add_parser("lan", help="the LAN door: HTTPS, keys required, off by default")
    lsub = lan.add_subparsers(dest="lan_command", required=True)
    lstatus = lsub.add_parser("status")
    lstatus.add_argument("--json", action="store_true")
    on = lsub.add_parser("on", help="open the LAN door on HOST:PORT (remembered)")
    on.add_argument("listen", metavar="HOST:PORT")
    lsub.add_parser("off", help="close the LAN door")
    lsub.add_parser("cert", help="print the LAN door CA LAN clients pin (PEM; name-constrained to this machine) and its fingerprint")
    lan.set_defaults(handler=run_lan)


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "-"


def _limits(row: KeyRow) -> str:
    parts = []
    if row.get("usd_per_day") is not None:
        parts.append(f"${row['usd_per_day']:g}/day")
    if row.get("requests_per_min"):
        parts.append(f"{row['requests_per_min']}/min")
    if row.get("off_lan") == "deny":
        parts.append("no off-LAN")
    return ", ".join(parts) or "-"


def _offline(home: Home) -> KeyStore:
    return KeyStore(home.root / KEYS_FILE)


def run_keys(args: argparse.Namespace) -> int:
    home = home_of(args)
    running = ControlClient.runtime(home) is not None
    if args.keys_command == "create":
        new = NewKey(name=args.name, models=args.models, off_lan=args.off_lan, usd_per_day=args.usd_per_day,
                     requests_per_min=args.requests_per_min)
        created: NewKeyRow
        if running:
            created = ControlClient(home).call("POST", "/keys", new.model_dump())
        else:
            home.ensure()
            record, key = _offline(home).create(new.name, models=new.models, off_lan=new.off_lan,
                                                usd_per_day=new.usd_per_day, requests_per_min=new.requests_per_min)
            created = {**record.public_json(), "key": key}
        if args.json:
            print_json(created)
        else:
            print(created["key"])
            print(f"key {args.name} created; it is shown this once (only its hash is kept). Send it as "
                  "'Authorization: Bearer <key>'.", file=sys.stderr)
        return 0
    if args.keys_command == "list":
        rows: list[KeyListRow] = ControlClient(home).call("GET", "/keys")["keys"] if running else \
            [{**r.public_json(), "usd_today": 0.0} for r in _offline(home).list()]
        if args.json:
            print_json(rows)
        else:
            print(table([[r["name"], r["state"], ", ".join(r.get("models") or []) or "any", _limits(r),
                          f"${r['usd_today']:.2f}" if r.get("usd_today") else "-", _when(r.get("created_at"))]
                         for r in rows], ["NAME", "STATE", "MODELS", "LIMITS", "TODAY", "CREATED"]))
        return 0
    if running:
        ControlClient(home).call("DELETE", f"/keys/{args.name}")
    else:
        _offline(home).revoke(args.name)
    print(f"key {args.name} revoked")
    return 0


def run_lan(args: argparse.Namespace) -> int:
    client = ControlClient(home_of(args))
    if args.lan_command == "cert":
        cert = client.call("GET", "/lan/cert")
        print(cert["pem"], end="")
        print(f"SHA-256 fingerprint: {cert['fingerprint']}", file=sys.stderr)
        return 0
    if args.lan_command == "on":
        status = client.call("PUT", "/lan", {"listen": args.listen})
    elif args.lan_command == "off":
        status = client.call("PUT", "/lan", {"listen": None})
    else:
        status = client.call("GET", "/lan")
    if getattr(args, "json", False):
        print_json(status)
    elif status["on"]:
        print(f"LAN access on at {status['url']} · {status['keys']} keys · pin the LAN door CA "
              f"(pairwise lan cert), SHA-256 {status['fingerprint']}")
    else:
        print(f"LAN access off · {status['keys']} keys" + (f" ({status['error']})" if status.get("error") else ""))
    return 0
