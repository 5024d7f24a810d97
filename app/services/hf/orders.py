"""What a create on Hugging Face is given, as one model each: an endpoint (``EndpointOrder``) and a batch
window (``WindowOrder``). The settings the new rented node is declared with are ``NodeSettings``'
(rented/change.py), nested as in its declaration and as ``pairwise rented set`` changes them:
``{"budget": {"usd_per_day": 5}, "lifecycle": {"idle_pause_min": 15}}``. An unknown or older field
(``usd_per_day`` at the top) is refused by name before anything is asked of Hugging Face: a misspelt
cap would be no cap.
"""

from __future__ import annotations

from typing import Any

from app.services.rented.change import NodeSettings, parse_given


class _Order(NodeSettings):
    name: str = ""
    model: str | None = None  # OWNER/NAME (checked by the plan, naming the flag)
    gpu: str | None = None
    engine: str | None = None
    namespace: str | None = None

    def caps(self) -> dict[str, float | None]:
        """The day and month caps the new node gets (None: no cap; ``"off"`` is none too)."""
        budget = self.declared().get("budget", {})
        return {"usd_per_day": budget.get("usd_per_day"), "usd_per_month": budget.get("usd_per_month")}

    def lifecycle_value(self, key: str) -> Any:
        return self.declared().get("lifecycle", {}).get(key)


class EndpointOrder(_Order):
    """``pairwise rented create``, ``POST /hf/rented`` (and ``/plan``), the tray's Add rented GPU."""

    region: str | None = None
    vendor: str | None = None
    endpoint_name: str | None = None
    task: str | None = None
    revision: str | None = None
    scale_to_zero_min: float | None = None
    context_window: int | None = None  # range checked by window_image.window_param
    same_as: list[str] | str | None = None  # checked by the service API (api/rented.py)


class WindowOrder(_Order):
    """``pairwise rented create --provider huggingface-job``, ``POST /hf/jobs`` (and ``/plan``), a batch's
    ``--rent``; ``lifecycle.idle_pause_min`` is its idle stop."""

    window: str | None = None  # 30m, 2h, 1d


def endpoint_order(params: dict[str, Any]) -> EndpointOrder:
    return parse_given(EndpointOrder, params, what="create")


def window_order(params: dict[str, Any]) -> WindowOrder:
    return parse_given(WindowOrder, params, what="create")
