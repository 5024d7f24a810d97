"""How much memory a copy of a model needs at its context window, and whether its machine has it.

Memory grows with the window: besides the weights, an engine keeps a KV cache of every token in the
window. Neither the engines nor the catalog say a model's layer shapes, so both parts are estimated
from the size its name states ("qwen2.5:7b", "Llama-3.1-70B-Instruct", "SmolLM2-135M"), the way the
wizard reads sizes (``wizard/fit.parameters_b``):

- weights: 16-bit unless the name says a quantisation ("q4_K_M", "Q8_0", "4bit", "awq", "gguf") or
  is an Ollama tag ("name:size", Ollama serves 4-bit by default);
- KV cache (16-bit): about ``KV_BYTES_PER_TOKEN_8B * (params / 8B) ** 0.6`` bytes per token, fitted
  to grouped-query models' shapes (Llama 3 8B: 128 KiB a token, Qwen2.5 7B: 56 KiB, Llama 3 70B:
  320 KiB);
- a tenth more for the engine's own buffers.

It is a hint said as one ("about"), never a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.ui.model_size import parameters_b

DEFAULT_WINDOW = 4096  # what most engines give a model when nobody asked for more
KV_BYTES_PER_TOKEN_8B = 96 * 1024
ENGINE_OVERHEAD = 1.1
GB = 1024**3
_BITS = (
    (re.compile(r"(?:^|[^a-z0-9])(?:i?q2)(?:_|[^a-z0-9]|$)", re.I), 2.6),
    (re.compile(r"(?:^|[^a-z0-9])(?:i?q3)(?:_|[^a-z0-9]|$)", re.I), 3.5),
    (re.compile(r"(?:^|[^a-z0-9])(?:i?q4|4bit|int4|awq|gptq)(?:_|[^a-z0-9]|$)", re.I), 4.5),
    (re.compile(r"(?:^|[^a-z0-9])(?:q5)(?:_|[^a-z0-9]|$)", re.I), 5.5),
    (re.compile(r"(?:^|[^a-z0-9])(?:q6)(?:_|[^a-z0-9]|$)", re.I), 6.6),
    (re.compile(r"(?:^|[^a-z0-9])(?:q8|8bit|int8|fp8)(?:_|[^a-z0-9]|$)", re.I), 8.5),
    (re.compile(r"(?:^|[^a-z0-9])(?:f16|fp16|bf16)(?:_|[^a-z0-9]|$)", re.I), 16.0),
)


def weight_bits(name: str) -> float:
    for pattern, bits in _BITS:
        if pattern.search(name):
            return bits
    if "gguf" in name.lower() or ("/" not in name and ":" in name):
        return 4.5  # a GGUF file or an Ollama tag: 4-bit unless it says otherwise
    return 16.0


@dataclass(frozen=True)
class Fit:
    weights_gb: float
    kv_gb: float
    window: int
    window_known: bool
    have_gb: float | None  # the copy's machine's memory, when known
    where: str  # "GPU memory" or "memory"

    @property
    def need_gb(self) -> float:
        return (self.weights_gb + self.kv_gb) * ENGINE_OVERHEAD

    @property
    def fits(self) -> bool | None:
        return None if self.have_gb is None else self.need_gb <= self.have_gb

    def text(self) -> str:
        """"needs about 9.8 GB at 32,768 tokens (4.1 GB weights + 4.8 GB KV cache) of 12 GB GPU memory"."""
        at = f"{self.window:,} tokens" if self.window_known else f"{self.window:,} tokens (window not known)"
        line = (f"needs about {gb(self.need_gb)} at {at} ({gb(self.weights_gb)} weights + {gb(self.kv_gb)} "
                "KV cache)")
        if self.have_gb is None:
            return f"{line}; its machine's memory is not known here"
        if self.fits:
            return f"{line} of {gb(self.have_gb)} {self.where}"
        return f"does not fit: {line}, its machine has {gb(self.have_gb)} {self.where}; use a shorter window"


def gb(value: float) -> str:
    return f"{value:.1f} GB" if value < 10 else f"{value:.0f} GB"


def estimate(name: str, window: int | None, hardware: Mapping[str, Any] | None = None) -> Fit | None:
    """The copy's memory at ``window`` (the learnt one; the usual default when not known), or None when
    the name states no size."""
    params = parameters_b(name)
    if params is None:
        return None
    tokens = window or DEFAULT_WINDOW
    weights = params * 1e9 * weight_bits(name) / 8 / GB
    kv = KV_BYTES_PER_TOKEN_8B * (params / 8) ** 0.6 * tokens / GB
    have, where = machine_memory_gb(hardware)
    return Fit(weights, kv, tokens, window is not None, have, where)


def machine_memory_gb(hardware: Mapping[str, Any] | None) -> tuple[float | None, str]:
    """What a machine can hold a model in: its GPUs' memory when it said it, else its memory (CPU and
    unified memory, where engines such as Ollama and llama.cpp run what no GPU holds)."""
    if not hardware:
        return None, "memory"
    vram = [float(g["vram_gb"]) for g in hardware.get("gpus") or [] if isinstance(g, Mapping) and g.get("vram_gb")]
    unified = any(isinstance(g, Mapping) and g.get("unified_memory") for g in hardware.get("gpus") or [])
    if vram and not unified:
        return sum(vram), "GPU memory"
    memory = hardware.get("memory_gb")
    return (float(memory), "memory") if memory else (None, "memory")
