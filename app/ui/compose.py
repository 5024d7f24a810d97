"""The tray's composition: every provider of this build registers its tray parts in the table of
``app/ui/providers.py``. A provider's tray package is a package of ``app/ui`` with a ``provider``
module whose ``register()`` does it; found here by that convention, so no generic module names a
provider. ``TrayApp`` calls ``register_providers()`` first (registering again is harmless); a test of a
view alone calls it itself."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import app.ui

PROVIDER_MODULE = "provider"


def provider_packages() -> list[str]:
    """The packages of ``app/ui`` that are a provider's (they have a ``provider`` module)."""
    found = []
    for info in pkgutil.iter_modules(app.ui.__path__, "app.ui."):
        if info.ispkg and importlib.util.find_spec(f"{info.name}.{PROVIDER_MODULE}") is not None:
            found.append(info.name)
    return sorted(found)


def register_providers() -> None:
    for package in provider_packages():
        importlib.import_module(f"{package}.{PROVIDER_MODULE}").register()
