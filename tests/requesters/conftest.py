from tests.rented.conftest import tls_tiny_factory

__all__ = ["tls_tiny_factory"]
