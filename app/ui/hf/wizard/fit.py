"""What a model needs and which GPU fits it, from what the catalog and the hardware list say.

The catalog gives a repository id and a task, not a size, so the size is read from the name the
way people write it ("SmolLM2-1.7B", "Llama-3.1-70B", "135M") and the GPU memory it needs is
estimated for 16-bit weights plus a fifth for the engine, and the KV cache of the context window
asked for (``KV_GB_PER_B_PER_1K``). It is a hint, said as one ("about"), never a refusal: a quantised
model needs less, a model without grouped-query attention more.
"""

from __future__ import annotations

from app.services.api import glossary
from app.services.hf.api import CatalogRow, HardwareOffer
from app.ui.model_size import parameters_b

EMBEDDING_TASKS = frozenset({"feature-extraction", "sentence-similarity", "sentence-embeddings", "embeddings"})
BYTES_PER_PARAM = 2.0  # 16-bit weights, as the tested engines serve them by default
OVERHEAD = 1.2
# KV cache per 1,024 tokens of window per billion parameters: about 128 KB a token for an 8B model with
# grouped-query attention (Llama 3, Qwen 2.5: 16-bit keys and values).
KV_GB_PER_B_PER_1K = 0.016


def is_embedding(model: CatalogRow) -> bool:
    task = str(model.get("task") or "").lower()
    return task in EMBEDDING_TASKS or "embed" in task


def memory_needed_gb(repo_id: str, window: int | None = None) -> float | None:
    """GPU memory for the weights, the engine and, given a window, its KV cache."""
    params = parameters_b(repo_id)
    if params is None:
        return None
    cache = params * KV_GB_PER_B_PER_1K * window / 1024 if window else 0.0
    return round(params * BYTES_PER_PARAM * OVERHEAD + cache, 1)


def size_hint(model: CatalogRow) -> str:
    repo = model["repo_id"]
    params, need = parameters_b(repo), memory_needed_gb(repo)
    if params is None or need is None:
        return "size not stated"
    size = f"{params * 1000:g}M" if params < 1 else f"{params:g}B"
    return f"{size} parameters · needs about {max(need, 1):g} GB of GPU memory"


def fits(row: HardwareOffer, need_gb: float | None) -> bool:
    memory = row["gpuMemoryGb"]
    if need_gb is None or memory is None:
        return True
    return memory * (row["numAccelerators"] or 1) >= need_gb


def cheapest_fit(rows: list[HardwareOffer], need_gb: float | None, window: int | None = None) -> tuple[int | None, str]:
    """Index of the cheapest GPU that can be rented now and fits, and why it was picked."""
    best: int | None = None
    for i, row in enumerate(rows):
        price = row["pricePerHour"]
        if row["unavailable_reason"] or price is None or not fits(row, need_gb):
            continue
        if best is None or price < (rows[best]["pricePerHour"] or 0.0):
            best = i
    if best is None:
        return None, ("No GPU that can be rented now has enough memory for this model."
                      if need_gb else "No GPU can be rented now.")
    row = rows[best]
    total = (row["gpuMemoryGb"] or 0.0) * (row["numAccelerators"] or 1)
    if need_gb is None:
        return best, "Suggested: the cheapest GPU you can rent now (the model's size is not stated)."
    with_window = f" with a {window:,}-token window" if window else ""
    return best, (f"Suggested: the cheapest GPU with enough memory — {total:g} GB for a model that needs about "
                  f"{max(need_gb, 1):g} GB{with_window}, at {glossary.per_hour(row['pricePerHour'])}.")
