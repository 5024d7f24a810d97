"""What may import what (docs/architecture.md, "Rules"): a module imports only its own room and the
rooms below it, and the tray imports from app/services only the service API, the event catalog,
the error tree and the platform layer (a provider's own part of each included). Walked from the source, so a lazy import inside a function
counts as much as one at the top; a type-only import (under ``if TYPE_CHECKING:``) may also name
the composition root's ``Node``, the handle a feature's ``attach_*`` is given. No two modules import
each other, however far round and whatever the kind of import (``test_no_import_goes_round``)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Each provider's part of the service API (its account, look-ups, routes), kept in its folder.
PROVIDER_API_PARTS = ("app.services.hf.api", "app.services.hf.routes", "app.services.hf.routes_jobs")
# Each provider's plugin module, found by the composition root (app/services/provider_plugins.py).
PROVIDER_PLUGINS = ("app.services.hf.provider_plugin",)
# Lowest first; a module belongs to the room of its longest matching prefix.
ROOMS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("app.environment", "app.home", "app.settings", "app.services.errors", "app.services.events",
              "app.services.api.rows", "app.services.api.snapshots", "app.services.api.plans",
              "app.services.platform", "app.services.clock", "app.services.secrets", "app.services.openfiles",
              "app.services.outbound", "app.services.listener_budget", "app.services.guard",
              "app.services.text_safety", "app.services.redaction", "app.services.eventloop", "app.services.node_ids",
              "app.services.upstream_facts", "app.services.json_types")),
    ("firstrun", ("app.services.firstrun",)),
    ("translate", ("app.services.translate",)),
    ("jobs", ("app.services.jobs",)),
    ("upstreams", ("app.services.backends", "app.services.routing")),
    ("inference", ("app.services.inference", "app.services.spliced", "app.services.translate.candidates")),
    ("http", ("app.services.frontdoor.http", "app.services.frontdoor.body", "app.services.frontdoor.control")),
    ("keys-core", ("app.services.keys.store", "app.services.keys.auth", "app.services.keys.limit_text")),
    ("frontdoor", ("app.services.frontdoor",)),
    ("cluster", ("app.services.cluster",)),
    ("rented", ("app.services.rented",)),
    ("hf", ("app.services.hf",)),
    ("keys", ("app.services.keys",)),
    ("batch", ("app.services.batch",)),
    ("metrics", ("app.services.metrics",)),
    ("node", ("app.services.node",)),
    ("api", ("app.services.api",)),
    # A provider's part of the service API and its control routes, in its folder (api/parts.py).
    ("provider-api", PROVIDER_API_PARTS),
    # What the composition root finds of each provider (provider_plugins.py): its attach and its API part.
    ("provider-plugins", PROVIDER_PLUGINS),
    ("compose", ("app.services.bootstrap", "app.services.provider_plugins")),
    # The tray: its generic views (which read a provider's parts from app/ui/providers.py, registered at
    # start by app/ui/compose.py), a provider's tray package above them, then the ways in.
    ("tray", ("app.ui",)),
    ("tray-providers", ("app.ui.hf",)),
    ("entry", ("app.ui.launch", "app.cli", "app.cli_", "app.control_client", "app.__main__")),
]
# Test doubles and tools, outside the house: they may use it, it never imports them (but the demo).
TOOLS = ("app.simulator", "app.tinymodel", "app.harness")
DEMO = "app.cli_hf.demo"
UI_MAY_USE = ("app.services.api", "app.services.events", "app.services.errors", "app.services.platform",
              # and a provider's own part of them: its service API, its events and errors
              "app.services.hf.api", "app.services.hf.events", "app.services.hf.errors")
# The tray's entry point builds its node as `pairwise serve` does (the views still see only the API).
LAUNCHER, LAUNCHER_MAY_USE = "app.ui.launch", ("app.services.bootstrap",)
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
    return [(module, how == "type-only", line) for module, _names, how, line in imported_names(path)]


@functools.cache
def imported_names(path: Path) -> list[tuple[str, tuple[str, ...], str, int]]:
    """(module, names taken from it, how: "type-only", "lazy" (inside a function) or "", line) for
    every absolute import of app in the file."""
    found: list[tuple[str, tuple[str, ...], str, int]] = []

    def walk(node: ast.AST, how: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    walk_one(stmt, "type-only")
                for stmt in child.orelse:
                    walk_one(stmt, how)
            else:
                walk_one(child, how)

    def walk_one(node: ast.AST, how: str) -> None:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, tuple(alias.name for alias in node.names), how, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, (), how, node.lineno) for alias in node.names)
        else:
            lazy = how == "" and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            walk(node, "lazy" if lazy else how)

    walk(ast.parse(path.read_text()), "")
    return [entry for entry in found if entry[0] == "app" or entry[0].startswith("app.")]


@functools.cache
def dependencies() -> dict[str, dict[str, str]]:
    """Each module of app/ -> the modules of app/ it imports -> how (first line, and "type-only" or
    "lazy" or ""). ``from a.b import c`` depends on ``a.b.c`` when that is a module, else on ``a.b``;
    a package's own ``__init__`` run on the way to its submodule is not counted (it is not a use)."""
    modules = {module_name(p): p for p in (REPO / "app").rglob("*.py")}
    graph: dict[str, dict[str, str]] = {}
    for name, path in modules.items():
        edges: dict[str, str] = {}
        for module, names, how, line in imported_names(path):
            targets = [f"{module}.{n}" if f"{module}.{n}" in modules else module for n in names] or [module]
            for target in targets:
                if target in modules and target != name:
                    edges.setdefault(target, f"line {line}" + (f", {how}" if how else ""))
        graph[name] = edges
    return graph


def circles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


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
        allowed_here = UI_MAY_USE + (LAUNCHER_MAY_USE if name == LAUNCHER else ())
        for target, _type_only, line in imports(path):
            if target.startswith("app.services") and not any(matches(target, allowed) for allowed in allowed_here):
                wrong.append(f"{name}:{line} imports {target}")
    assert wrong == [], "the tray reaches past the service API:\n" + "\n".join(wrong)


def test_the_walk_sees_lazy_and_type_only_imports() -> None:
    tray = imports(REPO / "app" / "ui" / "app.py")
    assert any(target == "app.services.api" and type_only for target, type_only, _ in tray)  # under TYPE_CHECKING
    cli = imports(REPO / "app" / "cli.py")
    assert any(target == "app.services.bootstrap" and not type_only for target, type_only, _ in cli)  # in a function
    rooms = [room_of(m) for m in ("app.services.keys.auth", "app.services.frontdoor.server", "app.services.keys.lan")]
    assert rooms == sorted(r for r in rooms if r is not None) and len(set(rooms)) == 3


def test_no_import_goes_round() -> None:
    """A circle of imports, even type-only or lazy ones, means two modules cannot be understood (nor
    loaded) one without the other: break it with a Protocol of what one reads of the other, or by
    moving what both need to a module below them (see cluster/context.py, wizard/state.py)."""
    graph = dependencies()
    found = circles(graph)
    report = []
    for group in found:
        members = set(group)
        report.append("a circle among " + ", ".join(group) + ":\n" + "\n".join(
            f"    {a} imports {b} ({how})" for a in group for b, how in sorted(graph[a].items()) if b in members))
    assert found == [], "import circles:\n" + "\n".join(report)


def test_the_circle_finder_sees_a_circle_through_a_type_only_import() -> None:
    graph = {"a": {"b": "line 1"}, "b": {"c": "line 2, type-only"}, "c": {"a": "line 3, lazy"}, "d": {"a": "line 4"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b": ""}, "b": {}}) == []
    # The walk resolves `from package import module` to the module, and sees type-only imports.
    cluster = dependencies()["app.services.cluster.service"]
    assert cluster["app.services.cluster.context"].endswith("type-only")
