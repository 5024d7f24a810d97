"""The context window an endpoint is created with: each engine image's own field for it.

Hugging Face's engine variants take the window in their image config, as its endpoint page sets
it: TGI (HF's default image) ``maxInputLength`` and ``maxTotalTokens``, llama.cpp ``ctxSize``,
vLLM ``maxModelLen``, SGLang ``contextLength``. ``rented create --context-window N`` sets it, so the
endpoint serves the bigger window a request needs and the rented node declares it (the window is
known before the first probe, so the first long request already routes there).
"""

from __future__ import annotations

from typing import Any

from app.services.errors import ConfigError

# The largest window any engine serves today is about a million tokens; beyond, it is a typo.
MAX_WINDOW = 1 << 21
WINDOW_FIELDS: dict[str, tuple[str, ...]] = {
    "huggingface": ("maxTotalTokens",), "tgi": ("maxTotalTokens",), "llamacpp": ("ctxSize",),
    "vLLM": ("maxModelLen",), "sGLang": ("contextLength",),
}
TGI_INPUT_FIELD = "maxInputLength"  # TGI wants the input a token short of the total


def window_param(value: Any) -> int | None:
    """``context_window`` of a create's parameters: None, or a whole number of tokens in range."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 256 <= value <= MAX_WINDOW:
        raise ConfigError(f"--context-window must be a whole number of tokens from 256 to {MAX_WINDOW}")
    return value


def sized_image(image: dict[str, Any], window: int | None) -> dict[str, Any]:
    """The create body's ``model.image`` with the window set in its variant's own field."""
    if window is None:
        return image
    sized: dict[str, Any] = {}
    for key, config in image.items():
        fields = WINDOW_FIELDS.get(key, ())
        if not fields:
            raise ConfigError(f"the {key} engine image takes no context window; choose --engine vllm, tgi or llamacpp")
        config = {**config, **dict.fromkeys(fields, window)}
        if "maxTotalTokens" in fields:
            config[TGI_INPUT_FIELD] = window - 1
        sized[key] = config
    return sized
