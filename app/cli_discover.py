"""`pairwise engines discover [--add] [--json] [--ports LIST]`: engines on loopback, found not typed.

Looks once (each usual port, in parallel, under a second), prints what answered with its models,
and with --add adopts each one not adopted yet: through the running node's control API, or into
the settings of a node that is not running (it uses them when it starts).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from app.cli_common import home_of, print_json
from app.control_client import ControlClient
from app.home import Home
from app.services.errors import ConfigError
from app.services.firstrun.adopt import free_name
from app.services.firstrun.discover import FoundEngine, default_ports, describe, discover

if TYPE_CHECKING:
    from app.cli_common import Commands


def add_discover_parser(esub: Commands) -> None:
    disc = esub.add_parser("discover", help="find engines on this machine's usual ports (Ollama, LM Studio, "
                                            "llama.cpp, LocalAI, vLLM, Jan, text-generation-webui)")
    disc.add_argument("--add", action="store_true", help="adopt every engine found that is not adopted yet")
    disc.add_argument("--json", action="store_true", help="print a JSON list of {url, api, models}")
    disc.add_argument("--ports", type=parse_ports, default=None,
                      help=f"comma-separated ports to look at (default {','.join(map(str, default_ports()))})")


def parse_ports(text: str) -> list[int]:
    try:
        ports = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"ports must be numbers separated by commas, not {text!r}") from exc
    if not ports or any(not 0 < p < 65536 for p in ports):
        raise argparse.ArgumentTypeError("ports must be between 1 and 65535")
    return ports


def cmd_discover(args: argparse.Namespace) -> int:
    home = home_of(args)
    found = asyncio.run(discover(args.ports))
    if not args.add:
        if args.json:
            print_json([f.to_json() for f in found])
        else:
            print(describe(found))
            if found:
                print("Adopt them with: pairwise engines discover --add")
        return 0
    added = adopt_found(home, found)
    if args.json:
        print_json([{**f.to_json(), "adopted_as": added.get(f.url)} for f in found])
        return 0
    print(describe(found))
    for url, name in added.items():
        print(f"adopted {url} as engine {name}")
    if found and not added:
        print("Every engine found was adopted already.")
    return 0


def adopt_found(home: Home, found: list[FoundEngine]) -> dict[str, str]:
    """Adopt what is not adopted yet; returns {url: engine name} for each one added."""
    running = ControlClient.runtime(home) is not None
    existing = ControlClient(home).call("GET", "/engines")["engines"] if running else _offline_engines(home)
    have_urls = {str(e["url"]).rstrip("/") for e in existing}
    taken = {str(e["name"]) for e in existing}
    added: dict[str, str] = {}
    for engine in found:
        if engine.url in have_urls:
            continue
        name = free_name(engine.name, taken, engine.url)
        decl = engine.declaration(name)
        if running:
            ControlClient(home).call("POST", "/engines", decl)
        else:
            _add_offline(home, decl)
        taken.add(name)
        added[engine.url] = name
    return added


def _offline_engines(home: Home) -> list[dict[str, Any]]:
    from app.settings import SettingsStore

    return [e.model_dump() for e in SettingsStore(home.settings_file).load().engines]


def _add_offline(home: Home, decl: dict[str, Any]) -> None:
    from app.services.backends.engines import add_engine_offline
    from app.services.cluster.identity import NodeIdentity
    from app.services.secrets import SecretStore
    from app.settings import SettingsStore

    store = SettingsStore(home.settings_file)
    identity = NodeIdentity.load_or_create(home.identity_dir, store.load().name)
    try:
        add_engine_offline(store, SecretStore(identity.node_id), decl, None)
    except ConfigError as exc:
        raise ConfigError(f"could not adopt {decl['url']}: {exc.message}") from exc
