"""While the sponsor stops, or once its cap is reached, a request for a paused node does not wake it (it
would bill on)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from app.services.errors import UpstreamError
from app.services.hf.hooks import HfHooks
from app.services.rented.hooks import LifecycleHooks


def fakes(exiting: bool, budget_reason: str | None = None) -> tuple[HfHooks, Any, list[str]]:
    resumed: list[str] = []

    class Client:
        async def resume(self, namespace: str, endpoint: str) -> Any:
            resumed.append(f"resume {endpoint}")
            raise UpstreamError("stop here: the resume call is what this test looks for")

    watch = SimpleNamespace(hf_state="paused", lock=asyncio.Lock(), namespace="demo-user", endpoint="gpu")
    lifecycle = SimpleNamespace(watch_of=lambda node: watch, touch=lambda w: None, clock=lambda: 0.0,
                                asking=lambda w, asked=True: resumed.append(f"ask {w.endpoint}"),
                                manager=SimpleNamespace(exiting=exiting, hooks=LifecycleHooks()),
                                hf=SimpleNamespace(client=Client, before_logout=[]))
    node = SimpleNamespace(name="gpu", price_reason=None, budget_reason=budget_reason, price_per_hour=0.8,
                           decl=SimpleNamespace(lifecycle=SimpleNamespace(managed=True, wake_on_request=True),
                                                budget=SimpleNamespace(model_dump=dict)))
    return HfHooks(lifecycle), node, resumed  # type: ignore[arg-type]


async def test_no_wake_while_the_sponsor_stops() -> None:
    hooks, node, resumed = fakes(exiting=True)
    with pytest.raises(UpstreamError, match="sponsor is stopping"):
        await hooks.before_route(node)
    assert resumed == []


async def test_wake_on_request_otherwise() -> None:
    hooks, node, resumed = fakes(exiting=False)
    with pytest.raises(UpstreamError):
        await hooks.before_route(node)
    # The ask is recorded before the call goes out: a sponsor killed mid-wake still charges the downtime.
    assert resumed == ["ask gpu", "resume gpu"]
