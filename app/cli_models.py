"""`pairwise models ...`: each model with its names and copies, and which names are one model.

    pairwise models [--json]                 every model: its names, and each copy (node, kind, window, load)
    pairwise models same NAME OTHER...       these names are one model: a copy here that serves any serves all
    pairwise models unlink NAME...           take names out of the model they were linked into
    pairwise models undo                     the names as they were before the last change
    pairwise models suggest [--json]         names that look like one model (linked only when you say so)
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from app.cli_common import home_of, print_json, table
from app.control_client import ControlClient

if TYPE_CHECKING:
    from app.cli_common import Commands


def register(sub: Commands) -> None:
    models: argparse.ArgumentParser = sub.add_parser("models", help="models, their names and copies (windows, load)")
    models.add_argument("--json", action="store_true")
    models.set_defaults(handler=cmd_list)
    msub = models.add_subparsers(dest="models_command")
    same = msub.add_parser("same", help="say that names are one model")
    same.add_argument("names", nargs="+", metavar="NAME")
    same.add_argument("--json", action="store_true")
    same.set_defaults(handler=cmd_same)
    unlink = msub.add_parser("unlink", help="take names out of the model they were linked into")
    unlink.add_argument("names", nargs="+", metavar="NAME")
    unlink.add_argument("--json", action="store_true")
    unlink.set_defaults(handler=cmd_unlink)
    undo = msub.add_parser("undo", help="the names as they were before the last change")
    undo.add_argument("--json", action="store_true")
    undo.set_defaults(handler=cmd_undo)
    suggest = msub.add_parser("suggest", help="names that look like one model")
    suggest.add_argument("--json", action="store_true")
    suggest.set_defaults(handler=cmd_suggest)


def _window(value: object) -> str:
    return str(value) if isinstance(value, int) else "unknown"


def cmd_list(args: argparse.Namespace) -> int:
    data = ControlClient(home_of(args)).call("GET", "/models")
    if args.json:
        print_json(data["models"])
        return 0
    rows = []
    for model in data["models"]:
        for i, copy in enumerate(model["copies"]):
            rows.append([" = ".join(model["names"]) if i == 0 else "", copy["node"], copy["kind"], copy["name"],
                         _window(copy.get("window")), f"{copy['in_flight']}/{copy['capacity']}"])
    print(table(rows, ["MODEL (NAMES)", "NODE", "KIND", "AS", "WINDOW", "LOAD"]))
    return 0


def _groups(groups: list[list[str]]) -> None:
    print("\n".join(" = ".join(g) for g in groups) if groups else "no names are linked")


def _change(args: argparse.Namespace, path: str, body: dict[str, Any] | None, key: str) -> Any:
    """A change to the names; its answer printed as JSON when asked."""
    answer = ControlClient(home_of(args)).call("POST", path, body)[key]
    if args.json:
        print_json(answer)
    return answer


def cmd_same(args: argparse.Namespace) -> int:
    names = _change(args, "/models/same", {"names": args.names}, "names")
    if not args.json:
        print(f"one model: {' = '.join(names)} (undo with: pairwise models undo)")
    return 0


def cmd_unlink(args: argparse.Namespace) -> int:
    _change(args, "/models/unlink", {"names": args.names}, "changed")
    if not args.json:
        print(f"unlinked {', '.join(args.names)}")
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    groups = _change(args, "/models/undo", None, "groups")
    if not args.json:
        _groups(groups)
    return 0


def cmd_suggest(args: argparse.Namespace) -> int:
    suggestions = ControlClient(home_of(args)).call("GET", "/models/suggest")["suggestions"]
    if args.json:
        print_json(suggestions)
    elif not suggestions:
        print("no names look like one model")
    else:
        for s in suggestions:
            print(f"{' and '.join(s['names'])} look like one model ({s['key']}); if they are: {s['command']}")
    return 0
