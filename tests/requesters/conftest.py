from tests.hf.conftest import sim_factory
from tests.rented.conftest import tls_tiny_factory

__all__ = ["sim_factory", "tls_tiny_factory"]
