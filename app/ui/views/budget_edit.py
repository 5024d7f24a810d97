"""What an edit of a rented node's money settings changes, said before it is saved.

The node detail's fields are compared with the row they were loaded from; each field that differs
is one ``Change`` ("Daily budget: $10.00/day → no cap"). Apply sends only those, as one
``RentedChange`` (``rented_change``: the model `pairwise rented set` and the control API use, so a
cap is spelt one way), so a click made to change "Pause after" never rewrites a cap; they are named
once saved, and a change that removes a cap is asked about first. No Qt here: the rules are tested
as data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from app.services.api import glossary
from app.services.api.changes import OFF, RentedChange, parse_given
from app.services.api.keys import parse_peer_values, peer_text, replacing, split_items
from app.services.api.rows import RentedActionRow


class Fields(TypedDict):
    """What the settings fields hold now (0 in a cap or idle field means none, as its text says)."""

    usd_per_day: float
    usd_per_month: float
    idle_pause_min: float
    wake_on_request: bool
    pause_on_sponsor_exit: bool
    peer_usd: str
    peer_rate: str


@dataclass(frozen=True)
class Change:
    where: tuple[str, str]  # its place in a RentedChange: ("budget", "usd_per_day")
    label: str
    before: str
    after: str
    value: Any  # what the change sends: "off" removes a cap or the idle pause
    removes_cap: bool = False

    def text(self) -> str:
        return f"{self.label}: {self.before} → {self.after}"


def _idle(minutes: float | None) -> str:
    return f"after {minutes:g} min" if minutes else "never"


def _on(flag: bool) -> str:
    return "on" if flag else "off"


def _table(table: dict[str, Any]) -> str:
    return peer_text(table) or "none"


def _cap(where: tuple[str, str], label: str, period: str, before: float | None, field: float) -> Change | None:
    after = round(field, 2) or None
    if (before or None) == after:
        return None
    return Change(where, label, glossary.cap(before, period), glossary.cap(after, period),
                  OFF if after is None else after, removes_cap=before is not None and after is None)


def _flag(where: tuple[str, str], label: str, before: bool, after: bool) -> Change | None:
    return None if bool(before) == after else Change(where, label, _on(before), _on(after), after)


def _peers(where: tuple[str, str], label: str, current: dict[str, Any], text: str, kind: type) -> Change | None:
    wanted = {k: v for k, v in parse_peer_values(split_items(text), kind, label).items() if v is not None}
    if wanted == current:
        return None
    return Change(where, label, _table(current), _table(wanted),
                  {peer: OFF if v is None else v for peer, v in replacing(current, wanted).items()})


def changes(row: RentedActionRow, fields: Fields) -> list[Change]:
    """Every setting the fields would change, in the order the form shows them. A per-peer field that
    does not parse raises ``ConfigError`` naming it (nothing is saved then)."""
    budget, life, limits = row["budget"], row["lifecycle"], row["requesters"]
    found = [_cap(("budget", "usd_per_day"), "Daily budget", "day", budget["usd_per_day"], fields["usd_per_day"]),
             _cap(("budget", "usd_per_month"), "Monthly budget", "month", budget["usd_per_month"],
                  fields["usd_per_month"])]
    if life["managed"]:  # only an endpoint Pairwise created has a lifecycle to change
        idle_before, idle_after = life["idle_pause_min"] or None, round(fields["idle_pause_min"], 1) or None
        if idle_before != idle_after:
            found.append(Change(("lifecycle", "idle_pause_min"), "Idle pause", _idle(idle_before), _idle(idle_after),
                                OFF if idle_after is None else idle_after))
        found += [_flag(("lifecycle", "wake_on_request"), "Wake on request", life["wake_on_request"],
                        fields["wake_on_request"]),
                  _flag(("lifecycle", "pause_on_sponsor_exit"), "Pause when Pairwise quits",
                        life["pause_on_sponsor_exit"], fields["pause_on_sponsor_exit"])]
    found += [_peers(("requesters", "usd_per_day"), "Per-peer $/day", dict(limits["usd_per_day"]),
                     fields["peer_usd"], float),
              _peers(("requesters", "requests_per_min"), "Per-peer requests/min", dict(limits["requests_per_min"]),
                     fields["peer_rate"], int)]
    return [c for c in found if c is not None]


def rented_change(found: list[Change]) -> RentedChange:
    """What Apply sends: the edits as one change, checked by the same model the control API uses."""
    body: dict[str, dict[str, Any]] = {}
    for change in found:
        part, field = change.where
        body.setdefault(part, {})[field] = change.value
    return parse_given(RentedChange, body)


def preview(found: list[Change]) -> str:
    """The line under the fields: what Apply would save."""
    if not found:
        return ""
    return "Apply changes " + "; ".join(c.text() for c in found) + "."


def saved(name: str, found: list[Change]) -> str:
    return f"{name}: saved " + "; ".join(c.text() for c in found) + "."


def removal_question(name: str, found: list[Change]) -> str | None:
    """The question asked before a cap is removed, or None when no cap goes."""
    gone = [c for c in found if c.removes_cap]
    if not gone:
        return None
    what = " and ".join(f"its {c.label.lower()} ({c.before})" for c in gone)
    return (f"Remove {what}? With no cap, {name} bills for as long as it runs; only the idle pause and "
            "pause on quit still stop it.")
