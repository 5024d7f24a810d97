"""What may import what (docs/architecture.md, "Rules"): a module imports only its own room and the
rooms below it, and the tray imports from app/services only the service API, the event catalog,
the error tree and the platform layer. Walked from the source, so a lazy import inside a function
counts as much as one at the top; a type-only import (under ``if TYPE_CHECKING:``) may also name
the composition root's ``Node``, the handle every feature is given."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Lowest first; a module belongs to the room of its longest matching prefix.
ROOMS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("app.environment", "app.home", "app.settings", "app.services.errors", "app.services.events",
              "app.services.api.rows",
              "app.services.platform", "app.services.clock", "app.services.secrets", "app.services.openfiles",
              "app.services.outbound", "app.services.listener_budget", "app.services.guard",
              "app.services.text_safety", "app.services.redaction", "app.services.eventloop", "app.services.node_ids")),
    ("firstrun", ("app.services.firstrun",)),
    ("translate", ("app.services.translate",)),
    ("jobs", ("app.services.jobs",)),
    ("upstreams", ("app.services.backends", "app.services.routing")),
    ("inference", ("app.services.inference", "app.services.translate.candidates")),
    ("http", ("app.services.frontdoor.http", "app.services.frontdoor.body", "app.services.frontdoor.control")),
    ("keys-core", ("app.services.keys.store", "app.services.keys.auth", "app.services.keys.limit_text")),
    ("frontdoor", ("app.services.frontdoor",)),
    ("cluster", ("app.services.cluster",)),
    ("rented", ("app.services.rented",)),
    ("hf", ("app.services.hf",)),
    ("keys", ("app.services.keys",)),
    ("node", ("app.services.node",)),
    ("api", ("app.services.api",)),
    ("compose", ("app.services.bootstrap",)),
    ("entry", ("app.ui", "app.cli", "app.cli_", "app.control_client", "app.__main__")),
]
# Test doubles and tools, outside the house: they may use it, it never imports them (but the demo).
TOOLS = ("app.simulator", "app.tinymodel", "app.harness")
DEMO = "app.cli_demo"
UI_MAY_USE = ("app.services.api", "app.services.events", "app.services.errors", "app.services.platform")
TYPE_ONLY_MAY_NAME = ("app.services.node",)


def matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".") or (prefix.endswith("_") and module.startswith(prefix))


def room_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for index, (_name, prefixes) in enumerate(ROOMS):
        for prefix in prefixes:
            if matches(module, prefix) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return best[0] if best else None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[str, bool, int]]:
    """(module imported, type-only?, line) for every absolute import in the file."""
    found: list[tuple[str, bool, int]] = []

    def walk(node: ast.AST, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    walk_one(stmt, True)
                for stmt in child.orelse:
                    walk_one(stmt, type_only)
            else:
                walk_one(child, type_only)

    def walk_one(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, type_only, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, type_only, node.lineno) for alias in node.names)
        else:
            walk(node, type_only)

    walk(ast.parse(path.read_text()), False)
    return [(name, type_only, line) for name, type_only, line in found if name == "app" or name.startswith("app.")]


def house() -> list[tuple[str, Path]]:
    return [(module_name(p), p) for p in sorted((REPO / "app").rglob("*.py"))
            if not module_name(p).startswith(TOOLS)]


def test_every_module_of_the_house_has_a_room() -> None:
    homeless = [name for name, _ in house() if name != "app" and name != "app.services" and room_of(name) is None]
    assert homeless == [], f"give these a room in ROOMS and in docs/architecture.md: {homeless}"


def test_no_module_imports_a_room_above_its_own() -> None:
    wrong = []
    for name, path in house():
        mine = room_of(name)
        if mine is None:
            continue
        for target, type_only, line in imports(path):
            if target == "app" or target.startswith(TOOLS):
                if name != DEMO and not name.startswith("app.cli"):
                    wrong.append(f"{name}:{line} imports the test double {target}")
                continue
            theirs = room_of(target)
            if theirs is None or theirs <= mine:
                continue
            if type_only and any(matches(target, allowed) for allowed in TYPE_ONLY_MAY_NAME):
                continue
            wrong.append(f"{name}:{line} ({ROOMS[mine][0]}) imports {target} ({ROOMS[theirs][0]})")
    assert wrong == [], "imports of a room above:\n" + "\n".join(wrong)


def test_the_tray_uses_only_the_service_api_events_errors_and_platform() -> None:
    wrong = []
    for name, path in house():
        if not matches(name, "app.ui"):
            continue
        for target, _type_only, line in imports(path):
            if target.startswith("app.services") and not any(matches(target, allowed) for allowed in UI_MAY_USE):
                wrong.append(f"{name}:{line} imports {target}")
    assert wrong == [], "the tray reaches past the service API:\n" + "\n".join(wrong)


def test_the_walk_sees_lazy_and_type_only_imports() -> None:
    tray = imports(REPO / "app" / "ui" / "app.py")
    assert any(target == "app.services.api" and type_only for target, type_only, _ in tray)  # under TYPE_CHECKING
    cli = imports(REPO / "app" / "cli.py")
    assert any(target == "app.services.bootstrap" and not type_only for target, type_only, _ in cli)  # in a function
    rooms = [room_of(m) for m in ("app.services.keys.auth", "app.services.frontdoor.server", "app.services.keys.lan")]
    assert rooms == sorted(r for r in rooms if r is not None) and len(set(rooms)) == 3
