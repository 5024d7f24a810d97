"""Rented nodes billed per token: a router that lists its models' prices (a provider whose ``WireTraits``
say ``lists_token_prices``) and any OpenAI-compatible provider with prices per token.

A per-token node costs ``prompt_tokens × in + completion_tokens × out`` (USD per 1M tokens), counted from
the usage each answer reports. The prices come from the router's ``/v1/models`` (each model's
``providers[].pricing``, the live providers it may send the model to; read at every probe) or from the
declaration (``price_per_mtok_in/out``, for a provider that publishes none); when both are known the higher
wins, and a model the router may send to any of several providers (no ``:provider`` suffix) is priced at
the dearest live one, so the meter never runs behind the bill. A listed price says who listed it: the
provider's ``display_name``, which the node's upstream is given. An answer that reports no usage is
estimated (4 characters a token for the prompt, ``max_tokens`` or ``ESTIMATE_COMPLETION`` for the
answer) and said to be an estimate. There is nothing to pause: at a cap the node is ineligible.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ESTIMATE_COMPLETION = 1024  # tokens assumed for an answer whose usage nobody reported and no max_tokens bounds
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class TokenPrice:
    usd_per_mtok_in: float
    usd_per_mtok_out: float
    source: str  # who listed it (its provider's display_name) | "declared"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.usd_per_mtok_in + completion_tokens * self.usd_per_mtok_out) / 1_000_000

    def text(self) -> str:
        return (f"${self.usd_per_mtok_in:g} per 1M input and ${self.usd_per_mtok_out:g} per 1M output tokens "
                f"({self.source})")


RouterPrices = dict[str, dict[str, tuple[float, float]]]  # model -> live provider -> (in, out)


def router_prices(listing: Any) -> RouterPrices:
    """The live providers' prices of each model in a router's ``/v1/models`` answer."""
    found: RouterPrices = {}
    for model in listing.get("data", []) if isinstance(listing, dict) else []:
        if not isinstance(model, dict) or not isinstance(model.get("id"), str):
            continue
        for provider in model.get("providers") or []:
            pricing = provider.get("pricing") if isinstance(provider, dict) else None
            if not isinstance(pricing, dict) or provider.get("status", "live") != "live":
                continue
            price_in, price_out = pricing.get("input"), pricing.get("output")
            if isinstance(price_in, int | float) and isinstance(price_out, int | float):
                found.setdefault(model["id"], {})[str(provider.get("provider"))] = (float(price_in), float(price_out))
    return found


def price_of(model: str, published: RouterPrices | None, declared: tuple[float | None, float | None],
             listed_by: str) -> TokenPrice | None:
    """What a request for ``model`` costs per token, or None if nobody says; ``listed_by`` names who
    published ``published`` (the price's source when it is theirs)."""
    candidates: list[TokenPrice] = []
    base, _, suffix = model.partition(":")
    offers = (published or {}).get(base, {})
    if suffix and suffix not in ("fastest", "cheapest", "preferred") and suffix in offers:
        offers = {suffix: offers[suffix]}
    if offers:
        candidates.append(TokenPrice(max(p[0] for p in offers.values()), max(p[1] for p in offers.values()),
                                     listed_by))
    if declared[0] is not None and declared[1] is not None:
        candidates.append(TokenPrice(declared[0], declared[1], "declared"))
    if not candidates:
        return None
    best = max(candidates, key=lambda p: p.usd_per_mtok_in + p.usd_per_mtok_out)
    return TokenPrice(max(p.usd_per_mtok_in for p in candidates), max(p.usd_per_mtok_out for p in candidates),
                      best.source)


def estimate(body: dict[str, Any]) -> tuple[int, int]:
    """(prompt, completion) tokens assumed for a request whose answer reports no usage."""
    messages = body.get("messages") if "messages" in body else body.get("prompt", "")
    prompt = max(1, len(json.dumps(messages, ensure_ascii=False)) // CHARS_PER_TOKEN)
    bound = body.get("max_completion_tokens") or body.get("max_tokens")
    return prompt, int(bound) if isinstance(bound, int) and bound > 0 else ESTIMATE_COMPLETION
