"""Prices per token: the router's listing, the dearest live provider unless one is named, the declared
prices where none is listed (the higher of both when both are), and the estimate of an answer without usage."""

from __future__ import annotations

from app.services.hf.providers import RouterProvider
from app.services.rented.per_token import ESTIMATE_COMPLETION, estimate, price_of, router_prices

ROUTER = RouterProvider.display_name  # who lists the prices: its provider's name, said as the price's source

LISTING = {"object": "list", "data": [
    {"id": "m", "providers": [{"provider": "fast", "status": "live", "pricing": {"input": 0.1, "output": 0.5}},
                              {"provider": "cheap", "status": "live", "pricing": {"input": 0.05, "output": 0.2}},
                              {"provider": "gone", "status": "offline", "pricing": {"input": 9, "output": 9}}]},
    {"id": "unpriced", "providers": [{"provider": "x", "status": "live"}]},
]}


def test_router_prices_take_the_dearest_live_provider_unless_one_is_named() -> None:
    table = router_prices(LISTING)
    assert table == {"m": {"fast": (0.1, 0.5), "cheap": (0.05, 0.2)}}
    dearest = price_of("m", table, (None, None), ROUTER)
    assert dearest is not None and (dearest.usd_per_mtok_in, dearest.usd_per_mtok_out) == (0.1, 0.5)
    named = price_of("m:cheap", table, (None, None), ROUTER)
    assert named is not None and named.usd_per_mtok_out == 0.2 and named.source == ROUTER == "Hugging Face router"
    assert named.text().endswith("(Hugging Face router)")  # what the node's row says, as before
    assert price_of("unpriced", table, (None, None), ROUTER) is None
    declared = price_of("unpriced", table, (1.0, 2.0), ROUTER)
    assert declared is not None and declared.source == "declared" and declared.cost(1_000_000, 500_000) == 2.0
    both = price_of("m", table, (0.2, 0.1), ROUTER)  # the higher of each, so the meter never runs behind the bill
    assert both is not None and (both.usd_per_mtok_in, both.usd_per_mtok_out) == (0.2, 0.5)


def test_an_answer_without_usage_is_estimated() -> None:
    assert estimate({"messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 64})[1] == 64
    prompt, completion = estimate({"messages": [{"role": "user", "content": "x" * 400}]})
    assert prompt >= 100 and completion == ESTIMATE_COMPLETION
