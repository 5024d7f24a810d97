"""The providers of this build, as the composition root finds them: a package of ``app/services`` with
a ``provider_plugin`` module is a provider's (``app/services/<provider>/provider_plugin.py``), so no generic
module names one. Found by that fixed rule, in the packages' name order, the way the tray finds its
provider packages (``app/ui/compose.py``).

A plugin module gives, at its top level:

    attach(node)     its part of a node built by ``bootstrap.build_node``, after the rented nodes
                     (``node.rented``: its providers and services go in their registry), before the
                     features that read them (requesters, cluster, batches, metrics);
    register_api()   its part of the service API and its routes (``api/parts.py::register_part``),
                     before the node's ``NodeApi`` is made;

and importing it registers what must be known before a node reads its settings (its section of
settings.json: ``app.settings.register_section``). Looking for the module runs no package: only a
provider's package is imported, as the composition root imported it by name before.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, cast

import app.services
from app.services.errors import ConfigError

if TYPE_CHECKING:
    from app.services.node import Node

PLUGIN_MODULE = "provider_plugin"


class ProviderPlugin(Protocol):
    def attach(self, node: Node) -> None: ...

    def register_api(self) -> None: ...


def provider_packages(root: ModuleType = app.services) -> list[str]:
    """The packages right under ``root`` that are a provider's (they have a ``provider_plugin`` module),
    by name. Their own ``__init__`` is not run to find out: a package's spec gives its folder."""
    found = []
    for info in pkgutil.iter_modules(root.__path__, root.__name__ + "."):
        if not info.ispkg:
            continue
        spec = importlib.util.find_spec(info.name)
        folders = spec.submodule_search_locations if spec is not None else None
        if folders and any(module.name == PLUGIN_MODULE for module in pkgutil.iter_modules(folders)):
            found.append(info.name)
    return sorted(found)


def provider_plugins(root: ModuleType = app.services) -> list[ProviderPlugin]:
    """Each provider's plugin module, imported (which registers its settings section), in name order."""
    plugins = []
    for package in provider_packages(root):
        module = importlib.import_module(f"{package}.{PLUGIN_MODULE}")
        missing = [name for name in ("attach", "register_api") if not callable(getattr(module, name, None))]
        if missing:
            raise ConfigError(f"{module.__name__} has no {' and no '.join(missing)}() "
                              "(see docs/adding-a-provider.md)")
        plugins.append(cast("ProviderPlugin", module))
    return plugins
