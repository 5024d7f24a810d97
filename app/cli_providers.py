"""Each provider's commands, found by name: a package ``app/cli_<provider>/`` whose ``COMMANDS`` is a
``ProviderCommands``. The generic CLI names no provider: it adds each package's command groups
(``register``), its subcommands of ``pairwise rented`` (``register_rented``: the generic group has
attach, apply, list, show, set, detach and the actions every provider may offer, pause, resume, stop
and delete), and, before it prints a table in words, the provider's words (``name_providers``); the
providers a declaration may name, for the help (``known_providers``)."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.cli_common import Commands


@dataclass(frozen=True)
class ProviderCommands:
    register: Callable[[Commands], None]  # its own command groups (``pairwise <provider> ...``)
    register_rented: Callable[[Commands], None]  # what it adds to ``pairwise rented``
    name_providers: Callable[[], None]  # its words in the glossary (what it is, who runs it)
    providers: tuple[str, ...] = ()  # the declaration ``provider`` strings its node side registers


@functools.cache
def provider_commands() -> tuple[ProviderCommands, ...]:
    import app

    found = []
    for info in sorted(pkgutil.iter_modules(app.__path__), key=lambda info: info.name):
        if info.ispkg and info.name.startswith("cli_"):
            commands = vars(importlib.import_module(f"app.{info.name}")).get("COMMANDS")
            if not isinstance(commands, ProviderCommands):
                raise TypeError(f"app/{info.name}/ is a provider's commands: it needs COMMANDS = ProviderCommands(...)")
            found.append(commands)
    return tuple(found)


def known_providers() -> tuple[str, ...]:
    """Every provider a declaration may name on a node running this app (the CLI's help lists them):
    each package's, then any OpenAI-compatible endpoint's. Found here, offline, with no node running."""
    from app.services.rented.provider import PlainProvider

    return (*(name for commands in provider_commands() for name in commands.providers), PlainProvider.name)


def name_providers() -> None:
    """Every provider's words in the glossary (before the CLI prints a rented node's state in words)."""
    for commands in provider_commands():
        commands.name_providers()
