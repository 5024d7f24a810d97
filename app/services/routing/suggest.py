"""Names that look like one model, from what engines say of their models: Ollama's ``/api/show``
(``general.basename``, ``general.size_label``), GGUF file names, repository ids (``owner/name``). Only
ever a suggestion: a Q4 GGUF and a bf16 checkpoint are one model because the user says so."""

from __future__ import annotations

import re

_QUANT = re.compile(r"[-_.](i?q\d(_\w+)?|f16|bf16|fp16|f32|fp8|awq|gptq|int[48]|mlx|[48]bit|gguf|latest)$")
# Tags of a model's name that say how its weights were tuned or packaged, not which model it is: dropped
# before two names are compared. One tag a line, with what it means where the name comes from.
_FLAVOUR = {
    "instruct": "tuned to follow instructions (Qwen2.5-7B-Instruct)",
    "chat": "tuned for chat (Llama-2-7b-chat)",
    "it": "instruction-tuned, Gemma's spelling (gemma-2-9b-it)",
    "hf": "converted to the transformers format, a tag of the name, not where it runs (Llama-2-7b-chat-hf)",
}


def model_key(name: str, basename: str | None = None, size_label: str | None = None) -> str | None:
    """Family and size, lower case (``qwen2.5-7b``), or None when the name says too little."""
    if basename and size_label:
        text = f"{basename}-{size_label}"
    else:
        text = name.rsplit("/", 1)[-1]
        text = re.sub(r"\.gguf$", "", text, flags=re.IGNORECASE).replace(":", "-")
    text = text.lower()
    while (cut := _QUANT.sub("", text)) != text:
        text = cut
    parts = [p for p in re.split(r"[-_ ]+", text) if p and p not in _FLAVOUR]
    if len(parts) < 2 or not any(re.fullmatch(r"\d+(\.\d+)?[bm]|\d+x\d+b|e\d+b", p) for p in parts):
        return None  # without a size, two names are too easily two different models
    return "-".join(parts)


def suggest(named: list[tuple[str, str | None]], linked: list[list[str]]) -> list[tuple[str, list[str]]]:
    """Groups of names with one key that are not linked yet: (key, names). ``named`` is
    (name, key) for each model a copy serves."""
    by_key: dict[str, list[str]] = {}
    for name, key in named:
        if key is not None and name not in by_key.setdefault(key, []):
            by_key[key].append(name)
    together = [set(g) for g in linked]
    out: list[tuple[str, list[str]]] = []
    for key, names in sorted(by_key.items()):
        if len(names) < 2 or any(set(names) <= group for group in together):
            continue
        out.append((key, names))
    return out
