"""Hugging Face's commands: ``pairwise hf ...`` (the account and look-ups, ``account.py``), what it
adds to ``pairwise rented`` (``create`` of an endpoint or a batch window, ``rented.py``, ``jobs.py``;
``logs`` and ``extend`` of a window), and the simulated Hugging Face (``pairwise simulator``,
``sim.py``; ``pairwise demo``, ``demo.py``).

The generic CLI finds this package as it finds every provider's (``app/cli_providers.py``): an
``app/cli_<provider>/`` package whose ``COMMANDS`` says what it adds.
Importing it makes Hugging Face's event kinds and error classes known to this process, so
``pairwise events --text`` reads them and the control client raises the node's error by its name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import app.services.hf.errors  # noqa: F401  (the node's HfAuthError... come back as themselves)
import app.services.hf.events  # noqa: F401  (hf_signed_in... join the event catalog)
from app.cli_hf import account, demo, jobs, rented, sim
from app.cli_providers import ProviderCommands
from app.services.hf.providers import PROVIDERS

if TYPE_CHECKING:
    from app.cli_common import Commands


def register(sub: Commands) -> None:
    sim.register(sub)
    account.register(sub)
    demo.register(sub)


def register_rented(rsub: Commands) -> None:
    rented.add_commands(rsub)
    jobs.add_commands(rsub)


def name_providers() -> None:
    from app.services.api import glossary
    from app.services.hf.words import COMPANY, LABELS

    for provider, label in LABELS.items():
        glossary.name_provider(provider, label, COMPANY)


COMMANDS = ProviderCommands(register=register, register_rented=register_rented, name_providers=name_providers,
                            providers=PROVIDERS)
