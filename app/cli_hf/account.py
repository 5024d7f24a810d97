"""`pairwise hf ...`: sign in to Hugging Face and look at what it offers.

Every command goes through the running node's control API (routes under /hf), so the token is read
from stdin once, handed to the node, kept in the OS keyring, and never comes back.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from app.cli_common import home_of, print_json, read_token_stdin, table
from app.control_client import ControlClient

YES_NO = {True: "yes", False: "no"}


def register(sub: Any) -> None:
    hf: argparse.ArgumentParser = sub.add_parser("hf", help="Hugging Face: sign in, catalog, hardware")
    hsub = hf.add_subparsers(dest="hf_command", required=True)
    login = hsub.add_parser("login", help="check a fine-grained token and keep it in the OS keyring")
    login.add_argument("--token-stdin", action="store_true", help="read the token from stdin")
    login.add_argument("--json", action="store_true")
    login.set_defaults(handler=cmd_login)
    logout = hsub.add_parser("logout", help="forget the token (managed endpoints that are billing are paused first)")
    logout.add_argument("--yes", action="store_true",
                        help="sign out even if a billing endpoint cannot be paused (it keeps billing on Hugging Face)")
    logout.set_defaults(handler=cmd_logout)
    status = hsub.add_parser("status", help="who the token belongs to and what it may do")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=cmd_status)
    catalog = hsub.add_parser("catalog", help="models with tested hardware and engine recipes")
    catalog.add_argument("--search", help="only models whose repository contains TEXT")
    catalog.add_argument("--json", action="store_true")
    catalog.set_defaults(handler=cmd_catalog)
    hardware = hsub.add_parser("hardware", help="GPUs and CPUs with price per hour and free quota")
    hardware.add_argument("--namespace", help="account or organisation (default: the token's user)")
    hardware.add_argument("--json", action="store_true")
    hardware.set_defaults(handler=cmd_hardware)


def _client(args: argparse.Namespace, timeout_s: float = 120.0) -> ControlClient:
    return ControlClient(home_of(args), timeout_s=timeout_s)


def _print_access(report: dict[str, Any]) -> None:
    rows = [[n["name"], n["kind"], YES_NO[n["can_manage"]], YES_NO[n["can_call"]]] for n in report["namespaces"]]
    print(table(rows, ["NAMESPACE", "KIND", "MANAGE ENDPOINTS", "CALL ENDPOINTS"]))
    for warning in report.get("warnings") or []:
        print(f"warning: {warning}", file=sys.stderr)


def cmd_login(args: argparse.Namespace) -> int:
    if args.token_stdin:
        token = read_token_stdin()
    elif sys.stdin.isatty():
        token = getpass.getpass("Hugging Face token (fine-grained): ").strip()
    else:
        raise SystemExit("error: give the token on stdin with --token-stdin")
    report = _client(args).call("POST", "/hf/login", {"token": token})
    if args.json:
        print_json(report)
        return 0
    name = f" (token {report['token_name']!r}, {report['role']})" if report.get("token_name") else ""
    print(f"Signed in to Hugging Face as {report['user']}{name}; the token is in the OS keyring.")
    _print_access(report)
    return 0


def cmd_logout(args: argparse.Namespace) -> int:
    _client(args).call("POST", "/hf/logout", {"yes": True} if args.yes else None)
    print("Signed out of Hugging Face; the token was removed from the OS keyring.")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    data = _client(args).call("GET", "/hf/status")
    if args.json:
        print_json(data)
    elif not data.get("signed_in"):
        print(data["message"])
    else:
        where = " (the SIMULATED Hugging Face: nothing is real or billed)" if data.get("simulated") else ""
        print(f"Signed in to Hugging Face as {data['user']}{where}.")
        _print_access(data)
    return 0


def cmd_catalog(args: argparse.Namespace) -> int:
    params = {"search": args.search} if args.search else None
    models = _client(args).call("GET", "/hf/catalog", params=params)["models"]
    if args.json:
        print_json(models)
        return 0
    rows = [[m["repo_id"], m.get("task") or "",
             ", ".join(f"{r.get('engine') or '?'}/{r.get('accelerator') or '?'}" for r in m.get("recipes") or [])]
            for m in models]
    print(table(rows, ["MODEL", "TASK", "TESTED RECIPES (engine/accelerator)"]) if rows else "no models match")
    return 0


def hardware_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    def money(value: float | None) -> str:
        return f"${value:g}" if value is not None else "?"

    return [[r["vendor"], r["region"], f"{r['instanceType']} {r['instanceSize']}", r["accelerator"],
             f"{r['gpuMemoryGb']:g} GB" if r.get("gpuMemoryGb") is not None else "-", money(r.get("pricePerHour")),
             r["status"], "?" if r.get("quotaFree") is None else f"{r['quotaFree']}/{r['quotaMax']}",
             r.get("unavailable_reason") or ""] for r in rows]


def cmd_hardware(args: argparse.Namespace) -> int:
    params = {"namespace": args.namespace} if args.namespace else None
    rows = _client(args).call("GET", "/hf/hardware", params=params)["hardware"]
    if args.json:
        print_json(rows)
        return 0
    print(table(hardware_rows(rows), ["VENDOR", "REGION", "INSTANCE", "ACCEL", "GPU MEMORY", "PER HOUR", "STATUS",
                                      "QUOTA FREE", "UNAVAILABLE BECAUSE"]))
    return 0
