"""What the tray shows, computed from snapshots alone (no Qt here, so it is tested as data).

``tray_state`` picks the icon: attention > billing > serving > idle. ``menu_model`` lists the
tray menu's entries; ``tray.py`` turns them into a QMenu each time the menu opens (the Vorta
lesson: rebuilt from live state, never patched).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.services.api import glossary
from app.services.api.rows import NodeRow, RelayedRentedFact, RentedActionRow, RentedFact, is_rented
from app.ui import fmt, providers

QUIET_REASONS = ("routing policy is 'never'", "not shared")


@dataclass
class MenuItem:
    text: str
    action: str | None = None  # "open", "add_rented", "quit", "pause:NAME", "resume:NAME", "stop:NAME", "show:NAME", "budget:NAME", "delete:NAME"
    enabled: bool = True
    tooltip: str = ""
    children: list[MenuItem] = field(default_factory=list)

    @property
    def separator(self) -> bool:
        return self.text == "-"


SEPARATOR = "-"


def billing(row: RentedActionRow) -> bool:
    """Is this (own) rented node costing money right now, as far as we can tell?"""
    return glossary.billing(row)


def attention_reasons(rented: list[RentedActionRow]) -> list[str]:
    """Why the user should look at Pairwise: a provider unreachable, a rented node failed,
    refused, changed outside Pairwise, or is open to anyone."""
    reasons = []
    for row in rented:
        name = row["name"]
        if glossary.unreachable(row):
            reasons.append(f"Can't reach {providers.display_name(row['provider'])} — {name} may still be billing")
        elif row["state"] == "unhealthy":
            reasons.append(f"{name} failed: {row['provider_message'] or row['reason'] or 'no details'}")
        elif row["credential_error"]:
            reasons.append(f"{name}: token refused ({row['credential_error']})")
        elif row["state"] == "ineligible" and row["reason"] and glossary.budget_period(row) is None \
                and not any(q in str(row["reason"]) for q in QUIET_REASONS):
            reasons.append(f"{name}: {glossary.rented_state(row)}")
        if row["warning"]:
            reasons.append(f"{name}: {glossary.plain(row['warning'])}")
    return reasons


def tray_state(*, rented: list[RentedActionRow], active_jobs: int, attention: bool = False) -> str:
    if attention or attention_reasons(rented):
        return "attention"
    if any(billing(r) for r in rented):
        return "billing"
    if active_jobs > 0:
        return "serving"
    return "idle"


def headline(*, name: str, active_jobs: int, rented: list[RentedActionRow]) -> str:
    """The one line the menu's header and the tooltip's first line share: what bills comes first."""
    parts = [f"Pairwise — {name}"]
    bills = glossary.billing_summary(rented)
    if bills:
        parts.append(bills)
    if active_jobs:
        parts.append(f"serving {glossary.plural(active_jobs, 'request')}")
    if len(parts) == 1:
        parts.append("idle")
    return " · ".join(parts)


def caps_text(row: RentedActionRow) -> str:
    """A rented node's caps: "gpu $5.00/day, $50.00/month", or "gpu no cap"."""
    budget = row["budget"]
    caps = [glossary.cap(usd, period) for usd, period in ((budget["usd_per_day"], "day"),
                                                          (budget["usd_per_month"], "month")) if usd is not None]
    return f"{row['name']} {', '.join(caps) or 'no cap'}"


def money_line(rented: list[RentedActionRow]) -> str:
    """The main window's money line, in the tray title's one format: what bills now, its rate, today's
    spend (UTC day) and each rented GPU's caps; empty when this machine rents nothing."""
    if not rented:
        return ""
    bills = glossary.billing_summary(rented)
    if bills is None:
        today = sum(float(r["cost"]["day_usd"] or 0) for r in rented)
        bills = f"nothing billing · {glossary.money(today)} today"
    caps = "; ".join(caps_text(r) for r in rented)
    simulated = " (simulated)" if any(r["simulated"] for r in rented) else ""
    return f"Rented GPUs{simulated}: {bills} · caps: {caps}"


def tooltip(state: str, *, name: str, active_jobs: int, rented: list[RentedActionRow]) -> str:
    lines = [headline(name=name, active_jobs=active_jobs, rented=rented)]
    for row in rented:
        if billing(row):
            lines.append(f"{row['name']}: {glossary.rented_state(row)} at {glossary.per_hour(row['price_per_hour'])}")
    lines.extend(attention_reasons(rented))
    return "\n".join(lines)


def stop_tip(row: Mapping[str, object] | None) -> str:
    """What Stop window does, said with the row's provider."""
    where = providers.display_name(row.get("provider")) if row is not None else "its provider"
    return (f"Cancels the batch window's job on {where}: billing stops. A window cannot be paused or "
            "resumed; a later batch starts a new window and loads the model again.")


def shared_entry(row: RentedFact | RelayedRentedFact) -> MenuItem:
    """A rented node another node sponsors (its shared fact carries no cost)."""
    name = str(row.get("name"))
    return MenuItem(f"{name} — {glossary.rented_state(row)} · shared by {row.get('sponsor', '?')}",
                    action=f"show:{name}", enabled=True)


def rented_entry(row: RentedActionRow) -> MenuItem:
    """A rented node this node sponsors: its cost today and what can be done about it."""
    name = row["name"]
    text = f"{name} — {glossary.rented_state(row)}"
    cost = row["cost"]["day_usd"]
    if cost:
        text += f" · {glossary.money(cost)} today"
    if "stop" in row["capabilities"] and "pause" not in row["capabilities"]:  # a fixed window: stopped, never paused
        return MenuItem(text, children=[
            MenuItem(f"{glossary.per_hour(row['price_per_hour'])} · {row['gpu'] or 'GPU unknown'}", enabled=False),
            MenuItem("Stop window", action=f"stop:{name}", enabled=row["stoppable"], tooltip=stop_tip(row)),
            MenuItem("Details…", action=f"show:{name}"),
            MenuItem("Remove from Pairwise…", action=f"delete:{name}")])
    managed = glossary.managed(row)
    why = "" if managed else "Pairwise did not create this endpoint, so it cannot pause or resume it"
    refusal = glossary.resume_refusal(row)
    children = [
        MenuItem(f"{glossary.per_hour(row['price_per_hour'])} · {row['gpu'] or 'GPU unknown'}", enabled=False),
        MenuItem("Pause", action=f"pause:{name}", enabled=glossary.pausable(row), tooltip=why),
        MenuItem("Resume", action=f"resume:{name}", enabled=glossary.resumable(row) and refusal is None,
                 tooltip=refusal or why),
    ]
    if refusal is not None:
        children.append(MenuItem("Raise budget…", action=f"budget:{name}", tooltip=refusal))
    children.append(MenuItem("Details…", action=f"show:{name}"))
    # The same words and the same question as the node's own Delete button (it asks what is lost).
    children.append(MenuItem("Delete…" if managed else "Remove from Pairwise…", action=f"delete:{name}"))
    return MenuItem(text, children=children)


def menu_model(*, name: str, nodes: list[NodeRow], rented: list[RentedActionRow], active_jobs: int,
               attention: list[str], requesters: str | None = None) -> list[MenuItem]:
    items = [MenuItem(headline(name=name, active_jobs=active_jobs, rented=rented), enabled=False)]
    if requesters:  # "LAN access on · 2 keys": opens Settings, where both are managed
        items.append(MenuItem(requesters, action="open"))
    for reason in attention:
        items.append(MenuItem(f"⚠ {reason}", action="open"))
    items.append(MenuItem(SEPARATOR))
    own = {r["name"] for r in rented}
    lan = [n for n in nodes if not is_rented(n)]
    items.append(MenuItem("Nodes", enabled=False))
    for node in lan:
        where = "this machine" if node["kind"] == "local" else "LAN"
        text = f"{node['name']} — {fmt.node_state(node)} · {where} · {glossary.plural(len(node['models']), 'model')}"
        items.append(MenuItem(text, action=f"show:{node['name']}"))
    shared = [n for n in nodes if is_rented(n) and n.get("name") not in own]
    if rented or shared:
        items.append(MenuItem(SEPARATOR))
        simulated = any(r["simulated"] for r in rented) or any(r.get("simulated") for r in shared)
        items.append(MenuItem("Rented · off-LAN" + (" (simulated)" if simulated else ""), enabled=False))
        items.extend(rented_entry(row) for row in rented)
        items.extend(shared_entry(row) for row in shared)
    items += [MenuItem(SEPARATOR), MenuItem("Add rented GPU…", action="add_rented"),
              MenuItem("Open Pairwise…", action="open"), MenuItem("Getting started…", action="welcome"),
              MenuItem(SEPARATOR), MenuItem("Quit", action="quit")]
    return items
