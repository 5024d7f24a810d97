"""A simulated Hugging Face: Inference Endpoints, the endpoints themselves, Jobs, whoami, catalog, router.

Served over HTTPS on 127.0.0.1 with a CA generated at start, so clients keep verification on and add
the CA file as an extra trust root. Everything it answers carries `X-Simulated: Hugging Face simulator`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.simulator.runner import SimulatedHF, SimulatorThread
    from app.simulator.settings import SimSettings

__all__ = ["SimSettings", "SimulatedHF", "SimulatorThread"]
_HOMES = {"SimulatedHF": "app.simulator.runner", "SimulatorThread": "app.simulator.runner",
          "SimSettings": "app.simulator.settings"}


def __getattr__(name: str) -> Any:
    # Loaded on first use: `pairwise serve` registers the `simulator` command (its arguments) at every
    # start, and the server itself costs tens of milliseconds of imports a node does not need.
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'app.simulator' has no attribute {name!r}")
