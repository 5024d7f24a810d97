"""The cost preview: "2 h a day at $1.80/h = $3.60/day; your $10.00/day cap allows 5.5 h a day"."""

from __future__ import annotations

from app.services.api import glossary
from app.ui import fmt


def cost_preview(price_per_hour: float | None, hours: float, *, usd_per_day: float | None = None,
                 usd_per_month: float | None = None, idle_pause_min: float | None = None) -> str:
    if price_per_hour is None:
        return "Hugging Face gives no price for this GPU; its cost cannot be previewed."
    total = price_per_hour * hours
    parts = [f"{fmt.hours(hours)} a day at {glossary.per_hour(price_per_hour)} = {glossary.money(total)}/day"]
    if usd_per_day:
        parts.append(f"your {glossary.cap(usd_per_day, 'day')} cap allows {fmt.hours(usd_per_day / price_per_hour)} "
                     "a day")
    if usd_per_month:
        parts.append(f"your {glossary.cap(usd_per_month, 'month')} cap allows "
                     f"{fmt.hours(usd_per_month / price_per_hour)} a month")
    if not usd_per_day and not usd_per_month:
        parts.append("no budget cap: it bills until it is paused")
    text = "; ".join(parts)
    if idle_pause_min:
        text += f". Paused after {idle_pause_min:g} min without requests."
    return text.rstrip(".") + ". Days and months are UTC."
