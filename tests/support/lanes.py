"""Which lane a test runs in, found from what it reaches, so a new test is classified without its author.

A test is *slow* when its body, its fixtures or the test helpers they call (followed through every
function and class defined under ``tests/``) name something heavy: node or engine processes, the
simulated Hugging Face, Qt, the OS keyring, llama.cpp. It then gets one marker per kind it reaches
(``processes``, ``simulator``, ``qt``, ``keyring``, ``llama``) and ``slow``; the fast lane is
``pytest -m "not slow"``. A marker written by hand on a test counts the same.

What the app does inside a call is not followed (an in-process node stays fast); a test that needs
a Secret Service says so with ``@pytest.mark.keyring`` or by calling ``require_secret_service``.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

TESTS = Path(__file__).resolve().parents[1]
KINDS = ("processes", "simulator", "qt", "keyring", "llama")  # each registered in pyproject.toml

# Qualified names (module, or module.name) and the kind they mark.
_HEAVY: dict[str, str] = {
    "app.harness.NodeProc": "processes",
    "app.harness.TinyProc": "processes",
    "app.harness.pair": "processes",
    "subprocess": "processes",
    "app.simulator.runner": "simulator",  # SimulatedHF, SimulatorThread
    "PySide6": "qt",
    "pytestqt": "qt",
    "app.ui": "qt",
    "keyring": "keyring",
    "tests.support.secret_service": "keyring",
    "llama_cpp": "llama",
}
# Every test under these directories has the kind (the tray's tests need Qt's system libraries).
DIRECTORIES = {"ui": "qt"}
_QT_FIXTURES = {"qtbot", "qapp", "qapp_args", "qapp_cls", "qtmodeltester", "qtlog"}


def _qualname(value: object) -> str | None:
    if isinstance(value, types.ModuleType):
        return value.__name__
    module = getattr(value, "__module__", None)
    name = getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(name, str):
        return f"{module}.{name}"
    return None


def _kind_of(value: object) -> str | None:
    qualname = _qualname(value)
    if qualname is None:
        return None
    for heavy, kind in _HEAVY.items():
        if qualname == heavy or qualname.startswith(heavy + "."):
            return kind
    if isinstance(value, type) and value.__module__ != "builtins":
        for base in value.__mro__[1:]:  # a test's subclass of NodeProc is a NodeProc
            kind = _kind_of(base)
            if kind:
                return kind
    return None


def _code_objects(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _in_tests(value: object) -> bool:
    try:
        source = inspect.getsourcefile(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return source is not None and Path(source).resolve().is_relative_to(TESTS)


class _Reach:
    """What one function names directly: the heavy kinds, the helpers under tests/ it names (functions,
    and the methods of classes), and the fixtures it asks for by name. Read once per function for the
    whole session: most tests share their helpers, and reading them again for each test was most of the
    fast lane's collection."""

    def __init__(self, func: Callable[..., object]) -> None:
        self.kinds: set[str] = set()
        self.helpers: list[Callable[..., object]] = []
        self.fixtures: list[str] = []
        scope = {**func.__globals__}
        if func.__closure__:
            scope.update(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__), strict=True))
        for code in _code_objects(func.__code__):
            names = (*code.co_names, *code.co_freevars)
            # A lazy import (`from tests.x import y` inside the function) names its module and then y.
            modules = [sys.modules[name] for name in names if name in sys.modules]
            for name in names:
                if name in scope:
                    self._value(scope[name])
                for module in modules:
                    self._value(module if module.__name__ == name else getattr(module, name, None))
            if "getfixturevalue" in code.co_names:  # request.getfixturevalue("engine_node")
                self.fixtures.extend(c for c in code.co_consts if isinstance(c, str) and c.isidentifier())

    def _value(self, value: object) -> None:
        if inspect.isfunction(value):
            value = inspect.unwrap(value)  # a @contextmanager helper is read where it was written
        kind = _kind_of(value)
        if kind:
            self.kinds.add(kind)
        elif isinstance(value, type) and _in_tests(value):
            self.helpers.extend(m for m in vars(value).values() if inspect.isfunction(m))
        elif inspect.isfunction(value) and _in_tests(value):
            self.helpers.append(value)


_READ: dict[int, tuple[Callable[..., object], _Reach]] = {}  # the function is kept so its id stays its own


def _reach(func: Callable[..., object]) -> _Reach:
    known = _READ.get(id(func))
    if known is None or known[0] is not func:
        known = _READ[id(func)] = (func, _Reach(func))
    return known[1]


class _Walk:
    """One test's walk: the kinds found, the functions already followed, how to look a fixture up."""

    def __init__(self, fixture: Callable[[str], Iterable[Callable[..., object]]]) -> None:
        self.found: set[str] = set()
        self.seen: set[int] = set()
        self.fixture = fixture

    def function(self, start: Callable[..., object]) -> None:
        """The kinds ``start`` names, following the helpers defined under tests/ that it names."""
        pending = [inspect.unwrap(start)]
        while pending:
            func = pending.pop()
            if id(func) in self.seen or not hasattr(func, "__code__"):
                continue
            self.seen.add(id(func))
            reach = _reach(func)
            self.found |= reach.kinds
            pending.extend(inspect.unwrap(helper) for helper in reach.helpers)
            for name in reach.fixtures:
                pending.extend(inspect.unwrap(fixture) for fixture in self.fixture(name))


def kinds_of(item: pytest.Item) -> set[str]:
    found = {mark.name for mark in item.iter_markers() if mark.name in KINDS}
    directory = DIRECTORIES.get(item.path.resolve().relative_to(TESTS).parts[0])
    if directory:
        found.add(directory)
    if not isinstance(item, pytest.Function):
        return found

    def fixture(name: str) -> list[Callable[..., object]]:
        definitions = item.session._fixturemanager.getfixturedefs(name, item) or ()
        return [definition.func for definition in definitions]

    walk = _Walk(fixture)
    walk.function(item.function)
    for name in item.fixturenames:
        if name in _QT_FIXTURES:
            walk.found.add("qt")
        for func in fixture(name):
            walk.function(func)
    return found | walk.found


def classify(items: list[pytest.Item]) -> None:
    for item in items:
        kinds = kinds_of(item)
        for kind in sorted(kinds):
            item.add_marker(kind)
        if kinds:
            item.add_marker("slow")


def left_out(path: Path, config: pytest.Config) -> bool:
    """Whether the marker expression (-m) leaves out every test under ``path``, so it need not even be
    imported: the fast lane then loads no Qt module that needs a system library."""
    expression = config.option.markexpr
    try:
        kind = DIRECTORIES.get(path.resolve().relative_to(TESTS).parts[0])
    except (ValueError, IndexError):
        return False
    if not expression or kind is None:
        return False
    return not Expression.compile(expression).evaluate(lambda name, **_: name in {kind, "slow"})
