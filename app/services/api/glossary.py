"""Plain words for what Pairwise shows: one glossary for the tray, the window, notifications and
CLI tables, so a state reads the same everywhere and no internal word ("eligible",
"scaledToZero", "when-no-local-node") reaches a user.

Everything here is a pure function of a node row (the shapes ``pairwise ... --json`` prints) or
of a number, so it is tested as data and imports neither Qt nor a service.

Money is always dollars with two decimals (``$0.42``, ``$5.00/day``, ``$1.80/h``); an amount
above zero but under a cent is ``<$0.01``, so a small charge never reads as free.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

POLICY_WORDS = {
    "when-no-local-node": "Used only when no machine on your LAN has the model",
    "overflow": "Used when the machines on your LAN are busy",
    "prefer": "Used first, before the machines on your LAN",
    "never": "Not used for requests",
}


@dataclass(frozen=True)
class ProviderWords:
    """How a person reads a provider: what it is ("My Cloud GPU") and who runs it ("My Cloud")."""

    label: str
    company: str


# A provider's words, by the declaration's ``provider``: each provider's folder names its own
# (``name_provider``) when its part of the service API is registered.
PROVIDER_WORDS: dict[str, ProviderWords] = {
    "openai-compatible": ProviderWords("OpenAI-compatible endpoint", "its provider"),
}


def name_provider(key: str, label: str, company: str) -> None:
    PROVIDER_WORDS[key] = ProviderWords(label, company)


# -- numbers -------------------------------------------------------------------------------------------------


def plural(count: int, word: str, many: str | None = None) -> str:
    """``plural(1, "model")`` → "1 model"; ``plural(3, "model")`` → "3 models"."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def money(usd: float | None) -> str:
    if usd is None:
        return "–"
    if 0 < abs(usd) < 0.005:
        return "<$0.01" if usd > 0 else "-<$0.01"
    sign = "-" if usd < 0 else ""
    return f"{sign}${abs(usd):.2f}"


def per_hour(usd: float | None) -> str:
    return "price unknown" if usd is None else f"{money(usd)}/h"


def cap(usd: float | None, period: str) -> str:
    """A budget cap: "$5.00/day", or "no cap"."""
    return "no cap" if usd is None else f"{money(usd)}/{period}"


# -- time ------------------------------------------------------------------------------------------------------


def cap_resets_at(period: str, now: dt.datetime | None = None) -> dt.datetime:
    """When a day or month budget starts again: the next UTC midnight, or the 1st of next month (UTC)."""
    now = now or dt.datetime.now(dt.UTC)
    today = dt.datetime(now.year, now.month, now.day, tzinfo=dt.UTC)
    if period == "month":
        year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
        return dt.datetime(year, month, 1, tzinfo=dt.UTC)
    return today + dt.timedelta(days=1)


def resets_text(period: str, now: dt.datetime | None = None) -> str:
    """"00:00 UTC" for a day cap, "1 Dec 00:00 UTC" for a month cap."""
    at = cap_resets_at(period, now)
    return "00:00 UTC" if period != "month" else f"{at.day} {at.strftime('%b')} 00:00 UTC"


def budget_period(row: Mapping[str, Any]) -> str | None:
    """"day" or "month" when the row is held by a budget cap, else None."""
    reason = str(row.get("reason") or "")
    if "budget reached" not in reason and "over its" not in reason and "over budget" not in reason.lower():
        return None
    return "month" if "per month" in reason or "/month" in reason else "day"


# -- rented node states ------------------------------------------------------------------------------------


def billing(row: Mapping[str, Any]) -> bool:
    """Is this (own) rented node costing money now, as far as the sponsor knows?"""
    if "billing" in row and isinstance(row["billing"], bool):
        return row["billing"]  # its provider's word (api/rented.with_actions)
    # A row without it (a peer's): a usable node with an hourly price is assumed to bill.
    return row.get("state") in ("eligible", "starting") and bool(row.get("price_per_hour"))


def managed(row: Mapping[str, Any]) -> bool:
    return bool((row.get("lifecycle") or {}).get("managed"))


def pausable(row: Mapping[str, Any]) -> bool:
    """What its provider allows now (the row's ``pausable``); a row without it cannot be paused from here."""
    return row.get("pausable") is True


def resumable(row: Mapping[str, Any]) -> bool:
    return row.get("resumable") is True


def resume_refusal(row: Mapping[str, Any]) -> str | None:
    """Why Resume would be refused now (over budget), in words with the way on; None when it may run."""
    period = budget_period(row)
    if period is None:
        return None
    budget = row.get("budget") or {}
    limit = budget.get("usd_per_month" if period == "month" else "usd_per_day")
    return (f"Over its {cap(limit, period)} budget until {resets_text(period)}. "
            "Raise the budget to resume it now.")


def unreachable(row: Mapping[str, Any]) -> bool:
    return bool(row.get("provider_unreachable"))


def company(row: Mapping[str, Any]) -> str:
    """Who runs a rented node's provider, as a sentence names it ("My Cloud", else "its provider")."""
    words = PROVIDER_WORDS.get(str(row.get("provider")))
    return words.company if words is not None else "its provider"


def rented_state(row: Mapping[str, Any]) -> str:
    """The short state of a rented node, as every view shows it."""
    state, reason = str(row.get("state") or ""), str(row.get("reason") or "")
    if unreachable(row):
        return f"Can't reach {company(row)}" + (" (may be billing)" if billing(row) else "")
    if state == "ineligible":
        period = budget_period(row)
        if period is not None:
            return f"Over budget (paused until {resets_text(period)})"
        if "changed outside Pairwise" in reason or "deleted outside Pairwise" in reason or "drift" in reason:
            return f"Changed on {company(row)} (not used)"
        if reason.startswith("credential refused"):
            return "Token refused (not used)"
        if "price per hour is unknown" in reason or "price is unknown" in reason:
            return "Price unknown (not used)"
        if "not shared" in reason:
            return "Not shared with this machine"
        if "policy is 'never'" in reason:
            return "Not used for requests"
        return "Not used"
    # The scheduler's state is its provider's word read by the provider's own table (rented/provider.py).
    if state == "paused":
        wakes = bool((row.get("lifecycle") or {}).get("wake_on_request"))
        return "Paused, wakes on request (no charge)" if wakes else "Paused (no charge)"
    if state == "cold":
        return "Asleep, wakes on request (no charge)"
    if state == "starting":
        return "Starting (billing)" if billing(row) else "Starting (waiting for a GPU)"
    if state == "unhealthy":
        return "Failed"
    if state == "eligible":
        return "Ready"
    return state.capitalize() or "Unknown"


def lan_state(row: Mapping[str, Any]) -> str:
    return "Online" if row.get("online", True) else "Offline"


def node_state(row: Mapping[str, Any]) -> str:
    return rented_state(row) if row.get("kind") == "rented" or "provider_state" in row else lan_state(row)


def policy(name: str | None) -> str:
    return POLICY_WORDS.get(str(name), str(name or "–"))


def provider(name: str | None) -> str:
    words = PROVIDER_WORDS.get(str(name))
    return words.label if words is not None else str(name or "–")


def billing_summary(rented: Sequence[Mapping[str, Any]]) -> str | None:
    """"1 GPU billing · $1.80/h · $0.42 today", or None when nothing bills."""
    billed = [r for r in rented if billing(r)]
    if not billed:
        return None
    rate = sum(float(r.get("price_per_hour") or 0) for r in billed)
    today = sum(float((r.get("cost") or {}).get("day_usd") or 0) for r in rented)
    return f"{plural(len(billed), 'GPU')} billing · {per_hour(rate)} · {money(today)} today"


# -- words a person reads instead of the code's --------------------------------------------------------------

PLAIN_WORDS = (
    ("drifted: ", "changed outside Pairwise: "),
    ("(unauthenticated)", "(no key)"),
    ("'when-no-local-node'", "'only when no machine on your LAN has the model'"),
    ("pause on sponsor exit", "pause when Pairwise quits"),
    ("the sponsor is stopping", "Pairwise is quitting"),
)


def plain(text: str) -> str:
    """A service's message in the words the tray uses (no "drifted", "sponsor", "unauthenticated")."""
    for code, words in PLAIN_WORDS:
        text = text.replace(code, words)
    return text
