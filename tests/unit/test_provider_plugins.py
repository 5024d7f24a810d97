"""The composition root finds each provider by its package's ``provider_plugin`` module
(``app/services/provider_plugins.py``): Hugging Face's is found and attached, a package without the
module is passed over without being run, and a plugin missing its functions is refused by name."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from app.home import Home
from app.services.bootstrap import build_node
from app.services.errors import ConfigError
from app.services.provider_plugins import PLUGIN_MODULE, provider_packages, provider_plugins
from app.settings import settings_sections

PLUGIN = """
calls = []

def attach(node):
    calls.append(("attach", node))

def register_api():
    calls.append(("register_api", None))
"""


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A package ``root`` on sys.path, for a test to lay packages in; removed from sys.modules after."""
    name = f"plugin_root_{tmp_path.name.replace('-', '_')}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("")
    sys.path.insert(0, str(tmp_path))
    try:
        yield name, tmp_path / name
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir()
    for file, text in {"__init__.py": "", **files}.items():
        (root / name / file).write_text(textwrap.dedent(text))


def _root(name: str) -> ModuleType:
    __import__(name)
    return sys.modules[name]


def test_the_hugging_face_package_is_found_by_its_plugin_module() -> None:
    found = provider_packages()
    assert "app.services.hf" in found
    assert found == sorted(found)  # a stable order: the packages' names
    plugins = provider_plugins()
    assert [p.__name__ for p in plugins if isinstance(p, ModuleType)] == [f"{p}.{PLUGIN_MODULE}" for p in found]
    assert "hf" in [section.key for section in settings_sections()]  # importing it registered its section


def test_a_package_without_the_plugin_module_is_passed_over_unrun(tree: tuple[str, Path]) -> None:
    name, root = tree
    _package(root, "cloud_b", {f"{PLUGIN_MODULE}.py": PLUGIN})
    _package(root, "cloud_a", {f"{PLUGIN_MODULE}.py": PLUGIN})
    # Were it imported to look for the module, it would fail the test.
    _package(root, "no_provider", {"__init__.py": "raise RuntimeError('looked into by running it')",
                                   "providers.py": ""})
    (root / f"{PLUGIN_MODULE}.py").write_text(PLUGIN)  # a module, not a package: not a provider
    assert provider_packages(_root(name)) == [f"{name}.cloud_a", f"{name}.cloud_b"]
    plugins = provider_plugins(_root(name))
    assert f"{name}.no_provider" not in sys.modules
    node = object()
    for plugin in plugins:
        plugin.attach(node)  # type: ignore[arg-type]
    first = sys.modules[f"{name}.cloud_a.{PLUGIN_MODULE}"]
    assert first.calls == [("attach", node)]


def test_a_plugin_without_its_functions_is_refused_by_name(tree: tuple[str, Path]) -> None:
    name, root = tree
    _package(root, "half", {f"{PLUGIN_MODULE}.py": "def attach(node):\n    pass\n"})
    with pytest.raises(ConfigError, match=rf"{name}\.half\.{PLUGIN_MODULE} has no register_api\(\)"):
        provider_plugins(_root(name))


def test_a_built_node_has_what_the_plugin_attaches(tmp_path: Path) -> None:
    node = build_node(Home(tmp_path / "home"), listen="127.0.0.1:0", cluster_listen="127.0.0.1:0", mdns=False)
    assert node.rented is not None
    known = node.rented.providers.names()
    assert {"huggingface-endpoint", "huggingface-router", "huggingface-job"} <= set(known), known
    paths = {path for _method, path, _handler in node.extra_control_routes}
    assert "/hf/status" in paths  # its part of the service API's routes (register_api)
