"""`pairwise`: every command. `serve` runs a node; most others talk to the running
node of a home through its control API."""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
from typing import Any

from app.cli_common import home_of, print_json, read_token_stdin, table
from app.cli_discover import add_discover_parser, cmd_discover
from app.control_client import ControlClient
from app.services.errors import PairwiseError
from app.services.events import StillBilling
from app.services.firstrun.offer import first_start_lines
from app.services.jobs.requester import requester_text
from app.services.platform.console import setup_console_output, typed_text
from app.services.platform.session_end import follow_console_session_end
from app.services.platform.signals import stop_event
from app.services.text_safety import printable


def add_node_options(parser: argparse.ArgumentParser, *, repeated: bool = False) -> None:
    """``repeated``: a command's copy of options the top level also takes. Its defaults are
    suppressed, so an option given before the command name is not reset by the command's parser."""
    default: Any = argparse.SUPPRESS if repeated else None
    parser.add_argument("--listen", default=default, help="front door HOST:PORT (default 127.0.0.1:11434)")
    parser.add_argument("--cluster-listen", default=default, help="cluster port HOST:PORT (default 0.0.0.0:14330)")
    parser.add_argument("--name", default=default, help="node name (default: the host name)")
    parser.add_argument("--no-mdns", action="store_true", default=argparse.SUPPRESS if repeated else False,
                        help="do not announce or browse with mDNS")


HOME_HELP = "node home directory (also PAIRWISE_HOME)"


def home_everywhere(parser: argparse.ArgumentParser) -> None:
    """Every command takes ``--home`` after its name too (``pairwise serve --home DIR``), as before it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in set(action.choices.values()):
                if not any("--home" in a.option_strings for a in command._actions):
                    command.add_argument("--home", default=argparse.SUPPRESS, help=HOME_HELP)
                home_everywhere(command)


def command_of(argv: list[str]) -> str | None:
    """The command named in ``argv`` (None for none), read the way the full parser reads the options before it."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--home")
    add_node_options(pre)
    pre.add_argument("command", nargs="?")
    return pre.parse_known_args(argv)[0].command


def build_parser(*, extensions: bool = True) -> argparse.ArgumentParser:
    """``extensions=False``: only the commands defined here (``serve`` among them), without importing
    the command groups' modules: a node started with ``pairwise serve`` needs none of them."""
    parser = argparse.ArgumentParser(prog="pairwise", description="Your machines as one LLM cluster.")
    parser.add_argument("--home", help=HOME_HELP)
    add_node_options(parser)
    sub = parser.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run a node headless until SIGINT or SIGTERM")
    add_node_options(serve, repeated=True)
    serve.add_argument("--lan-listen", metavar="HOST:PORT",
                       help="also open the LAN door there (HTTPS, keys required; remembered; 'off' closes it)")

    status = sub.add_parser("status", help="the running node's status")
    status.add_argument("--json", action="store_true")
    nodes = sub.add_parser("nodes", help="every node in the cluster")
    nodes.add_argument("--json", action="store_true")
    jobs = sub.add_parser("jobs", help="workloads, newest first")
    jobs.add_argument("--json", action="store_true")
    jobs.add_argument("--active", action="store_true")
    jobs.add_argument("--limit", type=int, default=50)
    events = sub.add_parser("events", help="print events as JSON lines (each event's kind, time and fields)")
    events.add_argument("--follow", action="store_true", help="keep following (the default)")
    events.add_argument("--text", action="store_true", help="one readable line per event instead of JSON")

    engines = sub.add_parser("engines", help="local engines adopted by base URL")
    esub = engines.add_subparsers(dest="engines_command", required=True)
    add = esub.add_parser("add")
    add.add_argument("name")
    add.add_argument("--url", required=True)
    add.add_argument("--api", choices=["ollama", "openai"], required=True)
    add.add_argument("--token-stdin", action="store_true", help="read a bearer token from stdin into the OS keyring")
    add.add_argument("--first-byte-timeout-s", type=float)
    add.add_argument("--idle-timeout-s", type=float,
                     help="seconds a started stream may go without a chunk before it fails (default 20)")
    add.add_argument("--capacity", type=int)
    add.add_argument("--context-window", type=int, metavar="N",
                     help="tokens one request may take, where the engine does not say")
    elist = esub.add_parser("list")
    elist.add_argument("--json", action="store_true")
    remove = esub.add_parser("remove")
    remove.add_argument("name")
    add_discover_parser(esub)

    database = sub.add_parser("database", help="the node's job history (state.db)")
    dsub = database.add_subparsers(dest="database_command", required=True)
    dsub.add_parser("set-aside", help="move a damaged state.db aside (kept) so the node starts a fresh one")

    for register in _extensions() if extensions else []:
        register(sub)
    home_everywhere(parser)
    return parser


def _extensions() -> list[Any]:
    """Command groups that live in their own modules, and each provider's (app/cli_providers.py)."""
    from app import cli_batch, cli_cluster, cli_keys, cli_models, cli_rented, cli_settings
    from app.cli_providers import provider_commands

    providers = provider_commands()

    def rented(sub: Any) -> None:
        cli_rented.register(sub, [p.register_rented for p in providers])

    return [rented, *(p.register for p in providers), cli_cluster.register, cli_keys.register,
            cli_settings.register, cli_models.register, cli_batch.register]


def main(argv: list[str] | None = None) -> int:
    setup_console_output()  # before the first line: redirected output must not fail on a node's name
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(extensions=command_of(words) != "serve")
    args = parser.parse_args(words)
    if getattr(args, "name", None):
        args.name = typed_text(args.name)
    try:
        if args.command is None:
            from app.ui.launch import launch_tray

            return launch_tray(args)
        if args.command == "serve":
            return serve(args)
        handler = COMMANDS.get(args.command) or getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return 2
        return int(handler(args) or 0)
    except PairwiseError as exc:
        print(f"error: {printable(exc.message)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def serve(args: argparse.Namespace) -> int:
    # Importing the node's modules makes about 70,000 objects that live as long as the process
    # (modules, classes, functions); the cyclic collector's passes over them while they are made find
    # little (import debris) and cost some 30 ms before the first answer. So it is off while they are
    # imported, and what exists then is frozen (kept out of every later pass) before it is on again.
    # Only the imports: what building and starting the node makes is collected as always (a node's
    # resources, such as its stores' connections, may be closed by the collector).
    gc.disable()
    try:
        from app.services.bootstrap import make_node
    finally:
        gc.freeze()
        gc.enable()

    node = make_node(args)
    lan_listen = getattr(args, "lan_listen", None)
    if lan_listen:
        node.settings.lan_listen = None if lan_listen == "off" else lan_listen
        node.settings_store.save(node.settings)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        stop, _ = stop_event(loop)
        # Closing the console, logoff and shutdown stop the node too, within the OS's few seconds.
        session = follow_console_session_end(lambda: loop.call_soon_threadsafe(stop.set))
        try:
            await node.start()
        except PairwiseError:
            if node.started_at:  # the front door was taken after the rest had started: stop the rest
                await node.stop()
            raise
        # A GPU left billing at exit is said where the user looks: here (the tray shows it too).
        node.bus.on(lambda event: print(f"WARNING: {event.message}", file=sys.stderr, flush=True)
                    if isinstance(event, StillBilling) else None)
        print(f"Pairwise node {node.name} serving on http://{node.frontdoor_address}", flush=True)
        if node.requesters is not None and node.requesters.lan.on:
            print(f"LAN door on https://{node.requesters.lan.address} (keys required)", flush=True)
        elif node.requesters is not None and node.requesters.lan.error:
            print(f"warning: {node.requesters.lan.error}", file=sys.stderr, flush=True)
        print(await first_start_lines(node), flush=True)
        await stop.wait()
        print(f"stopping ({session.reason})..." if session.ending else "stopping...", flush=True)
        try:
            await node.stop(timeout_s=session.grace_s if session.ending else None)
        finally:
            session.done()

    from app.services import eventloop

    eventloop.run(run())  # uvloop where installed; the tray keeps qasync's loop
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    data = ControlClient(home_of(args)).call("GET", "/status")
    if args.json:
        print_json(data)
    else:
        for key, value in data.items():
            print(f"{key:>12}: {value}")
    return 0


def cmd_nodes(args: argparse.Namespace) -> int:
    data = ControlClient(home_of(args)).call("GET", "/nodes")["nodes"]
    if args.json:
        print_json(data)
        return 0
    from app.cli_providers import name_providers
    from app.services.api import glossary  # here: the service API is heavy for every other command

    name_providers()
    rows = []
    for n in data:
        state = glossary.node_state(n)  # the words the tray shows
        label = n.get("label") or n.get("kind")
        extra = f"{n.get('gpu', '')} {glossary.per_hour(n.get('price_per_hour'))}" if n.get("kind") == "rented" else ""
        if n.get("simulated"):
            extra += " (simulated)"
        rows.append([n["name"], label, state, ", ".join(with_windows(n)), str(n.get("in_flight", 0)), extra])
    print(table(rows, ["NAME", "KIND", "STATE", "MODELS", "IN FLIGHT", ""]))
    return 0


def short_route(route: Any, width: int = 72) -> str:
    """The job's route reason for a table cell (the whole of it is in --json)."""
    text = route if isinstance(route, str) else ""
    return text if len(text) <= width else text[: width - 3] + "..."


def with_windows(row: dict[str, Any]) -> list[str]:
    """A node's models, each with the context window its engines say (``qwen2.5:7b (32768)``)."""
    windows: dict[str, Any] = {}
    for engine in row.get("engines") or []:
        if isinstance(engine, dict) and isinstance(engine.get("windows"), dict):
            windows.update({k: v for k, v in engine["windows"].items() if isinstance(v, int)})
    return [f"{m} ({windows[m]})" if m in windows else str(m) for m in row.get("models") or []]


def cmd_jobs(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    if args.active:
        params["active"] = "1"
    jobs = ControlClient(home_of(args)).call("GET", "/jobs", params=params)["jobs"]
    if args.json:
        print_json(jobs)
        return 0
    rows = [[j["id"][:8], j["model"], j["state"], requester_text(j), j.get("serving_node") or "-",
             "off-LAN" if j.get("off_lan") else "", str(j.get("completion_tokens") or ""),
             f"${j['cost_usd']:.4f}" if j.get("cost_usd") else "", short_route(j.get("route"))] for j in jobs]
    print(table(rows, ["ID", "MODEL", "STATE", "REQUESTER", "SERVED BY", "", "TOKENS", "COST", "WHY"]))
    return 0


def cmd_events(args: argparse.Namespace) -> int:
    import json
    import time

    from app.services.events import from_json

    for line in ControlClient(home_of(args)).stream_lines("/events"):
        if not args.text:
            print(json.dumps(line), flush=True)
            continue
        event = from_json(line)
        if event is not None:
            stamp = time.strftime("%H:%M:%S", time.localtime(event.at))
            print(f"{stamp} {event.kind}: {event.summary()}", flush=True)
        elif line.get("kind") == "subscribed":  # the stream's own lines
            print(f"following the events of {line.get('node')}", flush=True)
        elif line.get("kind") == "node_stopping":
            print("the node is stopping", flush=True)
        elif line.get("kind") != "keepalive":  # a kind this build does not know (a newer node)
            print(f"{line.get('kind')}: {json.dumps(line)}", flush=True)
    return 0


def cmd_engines(args: argparse.Namespace) -> int:
    from app.services.backends.engines import add_engine_offline
    from app.services.secrets import SecretStore

    if args.engines_command == "discover":
        return cmd_discover(args)
    home = home_of(args)
    running = ControlClient.runtime(home) is not None
    if args.engines_command == "add":
        data: dict[str, Any] = {"name": args.name, "url": args.url, "api": args.api}
        if args.first_byte_timeout_s is not None:
            data["first_byte_timeout_s"] = args.first_byte_timeout_s
        if args.idle_timeout_s is not None:
            data["idle_timeout_s"] = args.idle_timeout_s
        if args.capacity is not None:
            data["capacity"] = args.capacity
        if args.context_window is not None:
            data["context_window"] = args.context_window
        token = read_token_stdin() if args.token_stdin else None
        if running:
            result = ControlClient(home).call("POST", "/engines", {**data, "token": token} if token else data)
            models = ", ".join(result.get("models") or []) or "none yet"
            print(f"engine {args.name} added; models: {models}")
        else:
            from app.services.cluster.identity import NodeIdentity
            from app.settings import SettingsStore

            store = SettingsStore(home.settings_file)
            identity = NodeIdentity.load_or_create(home.identity_dir, store.load().name)
            add_engine_offline(store, SecretStore(identity.node_id), data, token)
            print(f"engine {args.name} added (the node will use it when it starts)")
        return 0
    client = ControlClient(home)
    if args.engines_command == "list":
        engines = client.call("GET", "/engines")["engines"]
        if args.json:
            print_json(engines)
        else:
            print(table([[e["name"], e["api"], e["url"], ", ".join(e["models"]), e.get("error") or "ok"]
                         for e in engines], ["NAME", "API", "URL", "MODELS", "STATUS"]))
        return 0
    client.call("DELETE", f"/engines/{args.name}")
    print(f"engine {args.name} removed")
    return 0


def cmd_database(args: argparse.Namespace) -> int:
    from app.services.jobs.store import set_aside

    home = home_of(args)
    if ControlClient.runtime(home) is not None:
        print("error: a node is running with this home; stop it first", file=sys.stderr)
        return 1
    if not home.database.exists():
        print(f"no database at {home.database}; the node makes a fresh one when it starts")
        return 0
    moved = set_aside(home.database)
    print(f"moved {home.database} to {moved} (kept); the node starts with a fresh job history "
          "(settings, pairings and rented nodes are not in it)")
    return 0


COMMANDS = {"status": cmd_status, "nodes": cmd_nodes, "jobs": cmd_jobs, "events": cmd_events, "engines": cmd_engines,
            "database": cmd_database}

if __name__ == "__main__":
    sys.exit(main())
