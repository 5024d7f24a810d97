"""A deterministic fake LLM server speaking the OpenAI and Ollama wire formats.

Used by tests, benchmarks, the demo and the simulated provider. Nothing here
loads a model: replies are words picked from a hash of the prompt, so the same
prompt always yields the same tokens and tests can assert on them.
"""

from app.tinymodel.options import TinyModelOptions
from app.tinymodel.server import RunningTiny, create_app, start_tiny

__all__ = ["RunningTiny", "TinyModelOptions", "create_app", "start_tiny"]
