"""A copy's context window: where each engine kind says it, read from what it answered.

Ollama says it in ``/api/ps`` (``context_length`` of the loaded model: what it really serves now), in
``/api/show`` (the ``num_ctx`` parameter of the model file, else the model's trained length in
``model_info``); llama.cpp's server in ``/props`` (``n_ctx`` of a slot, which is what one request gets);
vLLM in ``/v1/models`` (``max_model_len``); TGI in ``/info`` (read by ``rented/probe.py``); a router of
providers per provider (``context_length``). Whatever was learnt goes into the model entry's details under
``context_length``, the key every reader (listings, num_ctx, fit) looks at first.
"""

from __future__ import annotations

import re

from app.services.json_types import JsonObject

# Where OpenAI-compatible servers say how long a context their model takes, best first.
CONTEXT_KEYS = ("context_length", "max_model_len", "n_ctx", "max_context_length")
# An Ollama model's trained length, when nothing says what it serves: the model_info key.
_TRAINED = re.compile(r"^[\w.-]+\.context_length$")
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def context_length_of(details: JsonObject) -> int | None:
    """The context window an upstream says its model has, if it says."""
    for source in (details, details.get("meta") or {}):
        if not isinstance(source, dict):
            continue
        for key in CONTEXT_KEYS:
            found = positive_int(source.get(key))
            if found is not None:
                return found
    # A router of providers lists each provider's window; which provider serves is the router's choice,
    # so the smallest one is what a request can count on.
    providers = details.get("providers")
    windows = [w for p in providers if isinstance(p, dict) and (w := positive_int(p.get("context_length")))] \
        if isinstance(providers, list) else []
    return min(windows) if windows else None


def ollama_show_window(show: JsonObject) -> tuple[int | None, int | None]:
    """From an Ollama ``/api/show`` answer: (the model file's num_ctx, the model's trained length)."""
    parameters = show.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    raw_info = show.get("model_info")
    info: JsonObject = raw_info if isinstance(raw_info, dict) else {}
    trained = next((positive_int(v) for k, v in info.items() if _TRAINED.match(k) and positive_int(v)), None)
    return (int(match.group(1)) if match else None), trained


def llama_props_window(props: JsonObject | None) -> int | None:
    """llama.cpp's ``/props``: the context a slot holds (``default_generation_settings.n_ctx``)."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    found = positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return found or positive_int(props.get("n_ctx"))
