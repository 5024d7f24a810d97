"""Budget caps checked before something starts billing: what a create or resume must not do.

A provider bills per started minute, so a cap is only a cap if at least one billed minute fits under it; and
a node over its cap stays paused until the cap is raised or a new UTC day or month begins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.services.rented.spend import ACCOUNT_PREFIX

if TYPE_CHECKING:
    from app.services.rented.upstream import RentedUpstream

FLAGS = {"day": "--budget-usd-per-day", "month": "--budget-usd-per-month"}


def minute_refusal(name: str, budget: dict[str, Any], price_per_hour: float | None, *,
                   creating: bool = False) -> str | None:
    """Why caps ``{"usd_per_day", "usd_per_month"}`` cannot hold one billed minute at this price, or None."""
    if not price_per_hour:
        return None
    minute = price_per_hour / 60.0
    for period in ("day", "month"):
        cap = budget.get(f"usd_per_{period}")
        if cap is not None and cap < minute:
            return (f"the cap of ${cap:g} per {period} is less than one billed minute (${minute:.4f} at "
                    f"${price_per_hour:g}/h; the provider bills per started minute, so the first minute would "
                    f"pass it); " + (f"give {FLAGS[period]} of at least ${minute:.4f}" if creating else
                                     f"raise it to at least ${minute:.4f} with 'pairwise rented set {name} "
                                     f"{FLAGS[period]} USD'"))
    return None


def resume_refusal(node: RentedUpstream) -> str | None:
    """Why resuming ``node`` now would bill past what its caps allow, or None."""
    if node.price_reason:
        return node.price_reason
    if node.budget_reason and node.budget_reason.startswith(ACCOUNT_PREFIX):
        return node.budget_reason  # it names the file and the repair
    if node.budget_reason:
        period = "month" if "per month" in node.budget_reason else "day"
        return (f"{node.budget_reason}; raise the cap with 'pairwise rented set {node.name} {FLAGS[period]} USD' "
                f"or wait for the next UTC {period}")
    return minute_refusal(node.name, node.decl.budget.model_dump(), node.price_per_hour)
