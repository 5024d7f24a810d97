"""A simulated Hugging Face: Inference Endpoints, the endpoints themselves, Jobs, whoami, catalog, router.

Served over HTTPS on 127.0.0.1 with a CA generated at start, so clients keep verification on and add
the CA file as an extra trust root. Everything it answers carries `X-Simulated: Hugging Face simulator`.
"""

from app.simulator.runner import SimulatedHF, SimulatorThread
from app.simulator.settings import SimSettings

__all__ = ["SimSettings", "SimulatedHF", "SimulatorThread"]
