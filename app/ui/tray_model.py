"""What the tray shows, computed from snapshots alone (no Qt here, so it is tested as data).

``tray_state`` picks the icon: attention > billing > serving > idle. ``menu_model`` lists the
tray menu's entries; ``tray.py`` turns them into a QMenu each time the menu opens (the Vorta
lesson: rebuilt from live state, never patched).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.ui import fmt

QUIET_REASONS = ("routing policy is 'never'", "not shared")


@dataclass
class MenuItem:
    text: str
    action: str | None = None  # "open", "add_rented", "quit", "pause:NAME", "resume:NAME", "show:NAME"
    enabled: bool = True
    tooltip: str = ""
    children: list[MenuItem] = field(default_factory=list)

    @property
    def separator(self) -> bool:
        return self.text == "-"


SEPARATOR = "-"


def billing(row: dict[str, Any]) -> bool:
    """Is this (own) rented node costing money right now, as far as the service API can tell?"""
    return bool(row.get("billing"))


def attention_reasons(rented: list[dict[str, Any]]) -> list[str]:
    """Why the user should look at Pairwise: a rented node failed, refused, drifted, is open to anyone."""
    reasons = []
    for row in rented:
        name = row.get("name", "?")
        if row.get("state") == "unhealthy":
            reasons.append(f"{name} is unhealthy: {row.get('hf_message') or row.get('reason') or 'no details'}")
        elif row.get("credential_error"):
            reasons.append(f"{name}: credential refused ({row['credential_error']})")
        elif row.get("state") == "ineligible" and row.get("reason") and not any(
                q in str(row["reason"]) for q in QUIET_REASONS):
            reasons.append(f"{name}: {row['reason']}")
        if row.get("warning"):
            reasons.append(f"{name}: {row['warning']}")
    return reasons


def tray_state(*, rented: list[dict[str, Any]], active_jobs: int, attention: bool = False) -> str:
    if attention or attention_reasons(rented):
        return "attention"
    if any(billing(r) for r in rented):
        return "billing"
    if active_jobs > 0:
        return "serving"
    return "idle"


def tooltip(state: str, *, name: str, active_jobs: int, rented: list[dict[str, Any]]) -> str:
    lines = [f"Pairwise — {name}"]
    if active_jobs:
        lines.append(f"serving {active_jobs} request{'s' if active_jobs != 1 else ''}")
    billed = [r for r in rented if billing(r)]
    for row in billed:
        lines.append(f"{row['name']} billing at {fmt.price(row.get('price_per_hour'))}")
    lines.extend(attention_reasons(rented))
    if state == "idle" and len(lines) == 1:
        lines.append("idle")
    return "\n".join(lines)


def rented_entry(row: dict[str, Any], *, own: bool) -> MenuItem:
    name = str(row.get("name"))
    hf_state = row.get("hf_state")
    state = hf_state or fmt.node_state(row)
    cost = (row.get("cost") or {}).get("session_usd")
    text = f"{name} — {state}"
    if cost is not None:
        text += f" · {fmt.money(cost)} this session"
    if not own:
        return MenuItem(f"{text} · via {row.get('sponsor', '?')}", action=f"show:{name}", enabled=True)
    managed = bool((row.get("lifecycle") or {}).get("managed"))
    why = "" if managed else "Pairwise does not manage this endpoint (attached, not created or managed here)"
    children = [
        MenuItem(f"{fmt.price(row.get('price_per_hour'))} · {row.get('gpu') or 'GPU unknown'}", enabled=False),
        MenuItem("Pause", action=f"pause:{name}", enabled=bool(row.get("pausable")), tooltip=why),
        MenuItem("Resume", action=f"resume:{name}", enabled=bool(row.get("resumable")), tooltip=why),
        MenuItem("Details…", action=f"show:{name}"),
    ]
    return MenuItem(text, children=children)


def menu_model(*, name: str, nodes: list[dict[str, Any]], rented: list[dict[str, Any]], active_jobs: int,
               attention: list[str], requesters: str | None = None) -> list[MenuItem]:
    status = f"serving {active_jobs} request{'s' if active_jobs != 1 else ''}" if active_jobs else "idle"
    items = [MenuItem(f"Pairwise — {name} · {status}", enabled=False)]
    if requesters:  # "LAN access on · 2 keys": opens Settings, where both are managed
        items.append(MenuItem(requesters, action="open"))
    for reason in attention:
        items.append(MenuItem(f"⚠ {reason}", action="open"))
    items.append(MenuItem(SEPARATOR))
    own = {r.get("name") for r in rented}
    lan = [n for n in nodes if n.get("kind") != "rented"]
    items.append(MenuItem("Nodes", enabled=False))
    for node in lan:
        models = node.get("models") or []
        where = "this machine" if node.get("kind") == "local" else "LAN"
        text = f"{node.get('name')} — {fmt.node_state(node)} · {where} · {len(models)} model{'s' if len(models) != 1 else ''}"
        items.append(MenuItem(text, action=f"show:{node.get('name')}"))
    rented_rows = list(rented) + [n for n in nodes if n.get("kind") == "rented" and n.get("name") not in own]
    if rented_rows:
        items.append(MenuItem(SEPARATOR))
        simulated = any(r.get("simulated") for r in rented_rows)
        items.append(MenuItem("Rented · off-LAN" + (" (simulated)" if simulated else ""), enabled=False))
        for row in rented_rows:
            items.append(rented_entry(row, own=row.get("name") in own))
    items += [MenuItem(SEPARATOR), MenuItem("Add rented GPU…", action="add_rented"),
              MenuItem("Open Pairwise…", action="open"), MenuItem(SEPARATOR), MenuItem("Quit", action="quit")]
    return items
