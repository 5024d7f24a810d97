"""A model's size as its name says it ("SmolLM2-1.7B", "Llama-3.1-70B", "135M", "8x7B"): what the
GPU-memory hints of the models view and of a provider's GPU list start from."""

from __future__ import annotations

import re

_EXPERTS = re.compile(r"(?<![a-z0-9.])(\d+)x(\d+(?:\.\d+)?)([bm])(?![a-z])", re.IGNORECASE)
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", re.IGNORECASE)


def parameters_b(repo_id: str) -> float | None:
    """Billions of parameters as the name says them, or None ("…-1.7B-…" → 1.7, "…-135M" → 0.135)."""
    name = repo_id.rsplit("/", 1)[-1].replace("_", "-")
    experts = _EXPERTS.search(name)
    if experts:  # "8x7B": every expert's weights sit in GPU memory
        count, number, unit = experts.groups()
        return int(count) * float(number) / (1000.0 if unit.lower() == "m" else 1.0)
    found = None
    for number, unit in _SIZE.findall(name):
        value = float(number) / (1000.0 if unit.lower() == "m" else 1.0)
        found = value if found is None else max(found, value)
    return found
