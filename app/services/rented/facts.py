"""What a rented node looks like in node lists: on its sponsor, and to peers.

``shared_fact(node)`` is everything a peer may learn about a rented node; it never
carries the URL, the endpoint's name or the token. ``local_row(node, totals)`` adds
what only the sponsor shows (URL, endpoint, costs, errors).

For the cluster: ``peer_refusal(fact, caller)`` says why a peer's rented row (as
received from its sponsor) may not serve a caller on this node, or None. A peer node
can use it to refuse early with the sponsor's words ("sharing is off") instead of
relaying a request the sponsor would refuse anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from app.services.rented.decl import LABEL
from app.services.translate.shapes import canonical_model

if TYPE_CHECKING:
    # Type-only: the row types are a catalog in the base room, but importing the api package runs its __init__.
    from app.services.api.rows import BudgetRow, CostRow, LifecycleRow, RentedFact, RentedRow, RequestersRow
    from app.services.backends.base import Caller
    from app.services.rented.upstream import RentedUpstream


def eligibility(node: RentedUpstream) -> tuple[bool, str | None]:
    reason = node.ineligible_reason()
    if reason is None and node.policy() == "never":
        reason = "routing policy is 'never'"
    return reason is None, reason


def shared_fact(node: RentedUpstream) -> RentedFact:
    state, state_reason = node.status()
    eligible, reason = eligibility(node)
    return {
        "id": node.node_id, "name": node.name, "kind": "rented", "label": LABEL,
        "provider": node.decl.provider, "gpu": node.decl.gpu, "state": state,
        "price_per_hour": node.price_per_hour, "sponsor": node.sponsor_name, "sponsor_id": node.sponsor_id,
        "shared": node.decl.share_with_cluster, "policy": node.decl.policy, "eligible": eligible,
        "reason": reason or state_reason, "models": node.served_names(), "off_lan": True,
        "online": state in ("eligible", "cold") or (eligible and state in ("paused", "starting")),
        "in_flight": node.in_flight, "capacity": node.capacity, "cold_start_s": node.decl.cold_start_s,
        "warning": node.warning,
        # A simulated provider labels its answers; what it serves is labelled wherever it shows.
        "simulated": node.simulated,
        # Its window, so a peer routes only the requests it holds here (a peer's claim covers its own copies).
        "windows": {n: w for n in node.served_names() if (w := node.window(canonical_model(n))) is not None},
    }


def local_row(node: RentedUpstream, totals: dict[str, Any]) -> RentedRow:
    decl = node.decl
    cost: CostRow = {"session_usd": totals["session_usd"], "day_usd": totals["day_usd"], "month_usd": totals["month_usd"]}
    return {
        **shared_fact(node),
        "url": decl.url, "endpoint": decl.endpoint, "provider_state": node.state_word, "provider_message": node.state_message,
        "has_credential": node.has_token, "credential_error": node.credential_error,
        "last_error": node.last_error, "allow_models": decl.allow_models, "provider_unreachable": node.provider_unreachable,
        # model_dump keeps every field of the declaration's parts, in their order; the TypedDicts name them.
        "lifecycle": cast("LifecycleRow", decl.lifecycle.model_dump()),
        "budget": cast("BudgetRow", decl.budget.model_dump()),
        "requesters": cast("RequestersRow", decl.requesters.model_dump()),
        "cost": cost,
        # Flat spellings of the same totals, as `rented show --json` promises them (issue 6).
        "cost_session_usd": totals["session_usd"], "cost_month_usd": totals["month_usd"],
        "ca_file": decl.ca_file,
        "price_declared": decl.price_per_hour, "provider_price_per_hour": node.provider_price,
        "spend_account": totals.get("account"), "cap_note": cap_note(node),
        "spend_problem": totals.get("problem"), "billed_by": billed_by(node),
        # What a polled provider last reported (rented/provider_loop.py); None where nothing polls it.
        "reported_state": None if node.reported is None else node.reported.state.value,
        "reported_billing": None if node.reported is None else node.reported.billing,
        "reported_message": None if node.reported is None else node.reported.message,
    }


def billed_by(node: RentedUpstream) -> str:
    """How the node is billed, as `rented show` says it."""
    if not node.per_token:
        price = node.price_per_hour
        return f"per hour: ${price:g}/h" if price is not None else "per hour (price unknown)"
    prices = [f"{m}: {p.text()}" if (p := node.token_price(m)) else f"{m}: price unknown"
              for m in node.served_names()]
    return "per token, from the usage each answer reports (estimated when it reports none)" + \
        (f"; {'; '.join(prices)}" if prices else "")


def cap_note(node: RentedUpstream) -> str | None:
    """Who enforces a cap, on what, and in which days: shown by `rented show` and the node detail."""
    budget = node.decl.budget
    caps = [f"${cap:g} per {period}" for period, cap in (("day", budget.usd_per_day), ("month", budget.usd_per_month))
            if cap is not None]
    if not caps:
        return None
    what = f"endpoint {node.decl.endpoint}" if node.decl.endpoint else f"rented node {node.name}'s endpoint"
    pause = "pauses it at the cap" if node.decl.lifecycle.managed else "stops routing to it at the cap (not managed: it is not paused)"
    if node.per_token:
        pause = ("counts each answer's tokens at their prices and stops routing to it at the cap (billed per "
                 "token: there is nothing to pause; the answer that crosses the cap is the overshoot)")
    return (f"the cap of {' and '.join(caps)} is enforced by this sponsor ({node.sponsor_name}) for {what}: "
            f"spend is counted per endpoint, shared with every sponsor home on this machine, and this sponsor "
            f"{pause}; days and months are UTC")


def peer_refusal(fact: Mapping[str, Any], caller: Caller | None) -> str | None:
    """Why the rented node described by ``fact`` (a peer's shared fact) may not serve ``caller`` here."""
    name, sponsor = fact.get("name"), fact.get("sponsor")
    if not fact.get("shared"):
        return (f"rented node {name} is not shared: sharing with the cluster is off on its sponsor {sponsor}, "
                f"so only callers on {sponsor} may use it")
    if caller is not None and not caller.allow_off_lan:
        return f"off-LAN routing is denied for this caller ({caller.off_lan_rule}), and {name} is off-LAN"
    if not fact.get("eligible"):
        return str(fact.get("reason") or "not eligible on its sponsor")
    return None
