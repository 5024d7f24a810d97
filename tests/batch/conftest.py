"""The batch tests use the simulated Hugging Face of the HF tests."""

from tests.hf.conftest import sim_factory  # noqa: F401  (a fixture)
