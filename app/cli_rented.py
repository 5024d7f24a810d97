"""`pairwise rented`: attach, apply, list, show, set and detach rented nodes on the running node, and
the actions a rented node's provider offers (pause, resume, stop, delete: ``POST /rented/{name}/{action}``,
refused by name where it offers none). A provider's own subcommands (``create``...) join the group
from its commands' package (app/cli_providers.py).

A token is read from stdin (``--token-stdin``) and sent once to the node over loopback, which
keeps it in the OS keyring; it is never an argument (arguments show up in process lists).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.cli_common import home_of, on_off, print_json, read_token_stdin, table
from app.cli_providers import known_providers
from app.control_client import ControlClient
from app.services.api.changes import OFF, RentedChange, parse_given
from app.services.errors import ConfigError
from app.services.keys.peer_limits import parse_peer_values
from app.services.rented.decl import POLICIES, declarations_from

ON_OFF = ["on", "off"]
# Probing and resolving can take a while (an endpoint's first answer, a provider's API).
TIMEOUT_S = 120.0


def register(sub: Any, extensions: Sequence[Callable[[Any], None]] = ()) -> None:
    """The `rented` group; each of ``extensions`` adds a provider's own subcommands to it."""
    parser: argparse.ArgumentParser = sub.add_parser("rented", help="rented GPU nodes (off-LAN endpoints)")
    rsub = parser.add_subparsers(dest="rented_command", required=True)

    attach = rsub.add_parser("attach", help="attach an HTTPS endpoint as a rented node")
    attach.add_argument("name")
    attach.add_argument("--provider", default="openai-compatible",
                        help=f"{', '.join(known_providers())}, or one a plugin registers (docs/adding-a-provider.md)")
    attach.add_argument("--url", help="https base URL (http:// only for loopback hosts)")
    attach.add_argument("--endpoint", help="NAMESPACE/NAME of the provider's endpoint (instead of --url)")
    attach.add_argument("--token-stdin", action="store_true", help="read the bearer token from stdin into the keyring")
    attach.add_argument("--model", action="append", default=[], help="a model it serves (repeatable)")
    attach.add_argument("--share", action="store_true", help="share with the cluster (off by default)")
    attach.add_argument("--use", choices=POLICIES, help="routing policy (default when-no-local-node)")
    attach.add_argument("--cold-start-s", type=float)
    attach.add_argument("--gpu")
    attach.add_argument("--price-per-hour", type=float)
    add_token_prices(attach)
    attach.add_argument("--ca-file", help="extra trust root for this endpoint (PEM)")
    attach.add_argument("--managed", choices=ON_OFF, help="let Pairwise pause and resume it")
    attach.add_argument("--context-window", type=int, metavar="N",
                        help="tokens one request may take there, where the endpoint does not say")
    attach.add_argument("--json", action="store_true")

    apply = rsub.add_parser("apply", help="attach or replace rented nodes from a YAML or JSON file")
    apply.add_argument("file")
    apply.add_argument("--token-stdin", action="store_true", help="token for the declarations in the file")
    apply.add_argument("--json", action="store_true")

    lst = rsub.add_parser("list", help="rented nodes of this node")
    lst.add_argument("--json", action="store_true")
    show = rsub.add_parser("show", help="one rented node in detail")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")

    change = rsub.add_parser("set", help="change a rented node")
    change.add_argument("name")
    change.add_argument("--share", choices=ON_OFF)
    change.add_argument("--use", choices=POLICIES)
    change.add_argument("--cold-start-s", type=float)
    change.add_argument("--managed", choices=ON_OFF)
    add_cost_controls(change)
    change.add_argument("--peer-usd-per-day", action="append", metavar="PEER=USD",
                        help="daily spend cap for a peer node (name or id; '*' for peers not named; PEER=off removes)")
    change.add_argument("--peer-requests-per-min", action="append", metavar="PEER=N",
                        help="request rate for a peer node (name or id; '*' for peers not named; PEER=off removes)")
    change.add_argument("--allow-model", action="append", help="allowlist a model (repeatable); 'none' clears it")
    change.add_argument("--model", action="append", help="declared models (repeatable); 'none' clears them")
    change.add_argument("--gpu")
    change.add_argument("--price-per-hour", type=float)
    add_token_prices(change)
    change.add_argument("--url")
    change.add_argument("--ca-file")
    change.add_argument("--context-window", type=int, metavar="N",
                        help="tokens one request may take there, where the endpoint does not say (0 clears it)")
    change.add_argument("--token-stdin", action="store_true", help="replace the token in the keyring")
    change.add_argument("--json", action="store_true")

    detach = rsub.add_parser("detach", help="forget a rented node and delete its token from the keyring "
                                           "(a managed endpoint that is billing is paused first)")
    detach.add_argument("name")
    detach.add_argument("--yes", action="store_true",
                        help="detach even if the endpoint cannot be paused (it then keeps billing on its provider)")

    add_actions(rsub)
    for extend in extensions:
        extend(rsub)
    parser.set_defaults(handler=run)
    register_spend(sub)


def add_actions(rsub: Any) -> None:
    """What a person may do to a rented node, as its provider offers it (the row's ``actions``)."""
    for action, text in (("pause", "pause it on its provider (no charge; needs a resume)"), ("resume", "resume it"),
                         ("stop", "end it now (a batch window: its job is cancelled)")):
        parser = rsub.add_parser(action, help=text)
        parser.add_argument("name")
        parser.add_argument("--json", action="store_true")
        parser.set_defaults(handler=cmd_action, action=action)
    delete = rsub.add_parser("delete", help="delete it on its provider (irreversible) and detach it")
    delete.add_argument("name")
    delete.add_argument("--yes", action="store_true", help="delete without asking (for scripts)")
    delete.set_defaults(handler=cmd_delete)


def ask(question: str) -> str:
    print(question, end=" ", flush=True)
    line = sys.stdin.readline()
    return line.strip()


def cmd_action(args: argparse.Namespace) -> int:
    row = ControlClient(home_of(args), timeout_s=TIMEOUT_S).call("POST", f"/rented/{args.name}/{args.action}")["row"]
    if args.json:
        print_json(row)
        return 0
    state = row.get("provider_state") or row.get("state_now")
    print(f"rented node {args.name}: {state} on {row.get('provider_label') or row['provider']} ({row['state']})")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    client = ControlClient(home_of(args), timeout_s=TIMEOUT_S)
    row = client.call("GET", f"/rented/{args.name}")
    where = row.get("provider_label") or row["provider"]
    if not args.yes:
        print(f"Delete {where} {row.get('endpoint')} (rented node {args.name})? This cannot be undone on its provider.")
        if ask(f"Type {args.name} to confirm:") != args.name:
            raise ConfigError(f"not deleted: the confirmation did not match {args.name!r}")
    client.call("POST", f"/rented/{args.name}/delete", {"confirm": args.name})
    print(f"deleted endpoint {row.get('endpoint')} on {where}; rented node {args.name} detached")
    return 0


def register_spend(sub: Any) -> None:
    spend: argparse.ArgumentParser = sub.add_parser("spend", help="the spend account of rented endpoints")
    ssub = spend.add_subparsers(dest="spend_command", required=True)
    repair = ssub.add_parser("repair", help="start a new spend account when the old one is missing or damaged "
                                            "(the damaged file is kept aside)")
    repair.add_argument("--accept-usd", type=float,
                        help="take this as today's spend of each account (e.g. from its provider's billing page) "
                             "instead of rebuilding it from this sponsor's job records and last figures")
    repair.add_argument("--node", help="only the account of this rented node")
    repair.add_argument("--json", action="store_true")
    spend.set_defaults(handler=run_spend)


def run_spend(args: argparse.Namespace) -> int:
    client = ControlClient(home_of(args), timeout_s=TIMEOUT_S)
    body: dict[str, Any] = {"accept_usd": args.accept_usd, "name": args.node}
    result = client.call("POST", "/spend/repair", body)
    if args.json:
        print_json(result)
        return 0
    how = "as stated" if result["accepted"] else "rebuilt from the job records and the last figures read"
    print(f"a new spend account was started at {result['file']} ({how})")
    if result.get("moved_to"):
        print(f"the old file is kept as {result['moved_to']}")
    for account, usd in result["accounts"].items():
        print(f"  {account}: ${usd:.4f} today")
    return 0


def add_token_prices(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--price-per-mtok-in", type=float, help="USD per 1M input tokens (a provider billed per "
                                                                "token that publishes no price)")
    parser.add_argument("--price-per-mtok-out", type=float, help="USD per 1M output tokens")


def add_cost_controls(parser: argparse.ArgumentParser) -> None:
    """The lifecycle and budget flags, the same on `rented set` and `rented create`."""
    parser.add_argument("--idle-pause-min", type=number_or_off, metavar="MIN|off",
                        help="pause after this many minutes without work (off: never)")
    parser.add_argument("--budget-usd-per-day", type=number_or_off, metavar="USD|off",
                        help="spend cap per UTC day (off removes it)")
    parser.add_argument("--budget-usd-per-month", type=number_or_off, metavar="USD|off",
                        help="spend cap per UTC month (off removes it)")
    parser.add_argument("--wake-on-request", choices=ON_OFF)
    parser.add_argument("--pause-on-exit", choices=ON_OFF)


def number_or_off(text: str) -> float | str:
    if text.strip().lower() == OFF:
        return OFF
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (or 'off')") from None


def attach_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"name": args.name, "provider": args.provider, "share_with_cluster": args.share,
                            "models": args.model}
    for key in ("url", "endpoint", "gpu", "price_per_hour", "price_per_mtok_in", "price_per_mtok_out", "ca_file"):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    if args.ca_file:
        body["ca_file"] = str(Path(args.ca_file).expanduser().resolve())
    if args.use:
        body["routing"] = {"use": args.use}
    if args.cold_start_s is not None:
        body["timeouts"] = {"cold_start_s": args.cold_start_s}
    if args.managed:
        body["lifecycle"] = {"managed": on_off(args.managed)}
    if args.context_window is not None:
        body["context_window"] = args.context_window
    return body


def nest(body: dict[str, Any], path: str, value: object) -> None:
    """Put ``value`` (unless None) at ``path`` ("budget.usd_per_day") of a body nested as a declaration."""
    head, _, rest = path.partition(".")
    if value is not None:
        (body.setdefault(head, {}) if rest else body)[rest or head] = value


def cost_settings(args: argparse.Namespace, body: dict[str, Any]) -> dict[str, Any]:
    """The flags of ``add_cost_controls`` (and routing, cold start) into ``body``, nested as the declaration
    nests them: the same on `rented set` and `rented create`."""
    for flag, path in (("wake_on_request", "lifecycle.wake_on_request"),
                       ("pause_on_exit", "lifecycle.pause_on_sponsor_exit")):
        nest(body, path, on_off(getattr(args, flag, None)))
    for flag, path in (("use", "routing.use"), ("cold_start_s", "timeouts.cold_start_s"),
                       ("idle_pause_min", "lifecycle.idle_pause_min"), ("budget_usd_per_day", "budget.usd_per_day"),
                       ("budget_usd_per_month", "budget.usd_per_month")):
        nest(body, path, getattr(args, flag, None))
    return body


def set_changes(args: argparse.Namespace) -> RentedChange:
    """The flags of `rented set` as the one change model (spelt as the declaration nests it); its JSON is
    what the node is sent. A flag given as ``off`` (a cap, the idle pause), ``--context-window 0`` and
    ``--ca-file ''`` remove the setting."""
    body = cost_settings(args, {})
    nest(body, "share_with_cluster", on_off(args.share))
    nest(body, "lifecycle.managed", on_off(args.managed))
    for flag in ("gpu", "price_per_hour", "url", "price_per_mtok_in", "price_per_mtok_out"):
        nest(body, flag, getattr(args, flag))
    if args.context_window is not None:
        nest(body, "context_window", args.context_window or OFF)
    if args.ca_file is not None:
        nest(body, "ca_file", str(Path(args.ca_file).expanduser().resolve()) if args.ca_file else OFF)
    for flag, path in (("allow_model", "allow_models"), ("model", "models")):
        given = getattr(args, flag)
        if given is not None:
            nest(body, path, [] if given == ["none"] else given)
    for flag, path, kind in (("peer_usd_per_day", "requesters.usd_per_day", float),
                             ("peer_requests_per_min", "requesters.requests_per_min", int)):
        if getattr(args, flag):
            values = parse_peer_values(getattr(args, flag), kind, "--" + flag.replace("_", "-"))
            nest(body, path, {peer: OFF if v is None else v for peer, v in values.items()})
    return parse_given(RentedChange, body)


def yaml_error() -> type[Exception]:
    import yaml

    return yaml.YAMLError


def read_declarations(path: str) -> list[dict[str, Any]]:
    text = Path(path).expanduser().read_text(encoding="utf-8")
    try:
        if path.endswith(".json"):
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except (ValueError, ImportError) as exc:
        raise ConfigError(f"{path} is not valid YAML or JSON: {exc}") from exc
    except yaml_error() as exc:  # yaml.YAMLError is not a ValueError
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    return declarations_from(data)


def run(args: argparse.Namespace) -> int:
    client = ControlClient(home_of(args), timeout_s=TIMEOUT_S)
    command = args.rented_command
    if command == "attach":
        body = attach_body(args)
        if args.token_stdin:
            body["token"] = read_token_stdin()
        return report(client.call("POST", "/rented", body), args.json)
    if command == "apply":
        decls = read_declarations(args.file)
        payload: dict[str, Any] = {"declarations": decls}
        if args.token_stdin:
            payload["token"] = read_token_stdin()
        rows = client.call("POST", "/rented/apply", payload)["rented"]
        if args.json:
            print_json(rows)
        else:
            for row in rows:
                report(row, False)
        return 0
    if command == "list":
        rows = client.call("GET", "/rented")["rented"]
        if args.json:
            print_json(rows)
        else:
            from app.cli_providers import name_providers
            from app.services.api import glossary  # here: heavy for every other command

            name_providers()

            print(table([[r["name"], r["provider"], glossary.rented_state(r), "yes" if r["shared"] else "no",
                          r["policy"], ", ".join(r["models"]), glossary.per_hour(r.get("price_per_hour")),
                          r.get("reason") or ""] for r in rows],
                        ["NAME", "PROVIDER", "STATE", "SHARED", "POLICY", "MODELS", "PRICE", "REASON"]))
        return 0
    if command == "show":
        row = client.call("GET", f"/rented/{args.name}")
        report(row, args.json, detail=True)
        if not args.json:
            from app.services.keys.limits import today_text

            rows = client.call("GET", "/requesters/today", params={"rented": args.name})["today"]
            print(f"{'by requester':>16}: {today_text(rows)}")
        return 0
    if command == "set":
        change = set_changes(args)
        payload = {"changes": change.model_dump(mode="json", exclude_none=True)}
        if args.token_stdin:
            payload["token"] = read_token_stdin()
        if not change.model_fields_set and "token" not in payload:
            raise ConfigError("nothing to change: give at least one option (see 'pairwise rented set --help')")
        return report(client.call("PATCH", f"/rented/{args.name}", payload), args.json)
    if command == "detach":
        client.call("DELETE", f"/rented/{args.name}", {"yes": True} if args.yes else None, timeout_s=TIMEOUT_S)
        print(f"rented node {args.name} detached; its token was deleted from the keyring")
        return 0
    raise ConfigError(f"unknown rented command {command!r}")


def report(row: dict[str, Any], as_json: bool, *, detail: bool = False) -> int:
    if as_json:
        print_json(row)
        return 0
    models = ", ".join(row.get("models") or []) or "none known"
    line = f"rented node {row['name']} ({row['label']}): {row['state']}; models: {models}"
    if row.get("reason"):
        line += f"; {row['reason']}"
    print(line)
    if row.get("warning"):
        print(f"warning: {row['name']} {row['warning']}")
    if detail:
        for key in ("provider", "url", "endpoint", "gpu", "price_per_hour", "shared", "policy", "cold_start_s",
                    "provider_state", "provider_message", "has_credential", "last_error", "allow_models", "lifecycle", "budget",
                    "requesters", "cost", "provider_price_per_hour", "spend_account", "billed_by"):
            print(f"{key:>16}: {row.get(key)}")
        if row.get("cap_note"):
            print(f"{'cap':>16}: {row['cap_note']}")
        if row.get("spend_problem"):
            print(f"{'spend account':>16}: {row['spend_problem']}; run 'pairwise spend repair'")
        for key in ("window_stage", "window_job", "window_ends_at", "ended_by"):  # a batch window's
            if row.get(key) is not None:
                print(f"{key:>16}: {row.get(key)}")
        for line in row.get("last_log_lines") or []:
            print(f"{'log':>16}: {line}")
    return 0
