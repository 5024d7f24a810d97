"""Which upstreams may serve a model, in which order. Pure decisions, no I/O.

LAN owners (local engines and peers) are ordered by load: requests in flight
relative to capacity. Rented owners join by their policy:

    prefer               ahead of every LAN owner
    overflow             after the LAN owners; ahead of them when all are busy
    when-no-local-node   only when no LAN owner is up (including after they fail)
    never                attached, never routed

Each rented owner that cannot serve is listed with the reason, so a refusal can
say which nodes were considered and why they were not used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.services.backends.base import Upstream


@dataclass
class Plan:
    model: str
    candidates: list[Upstream] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    def refusal_text(self) -> str:
        return "; ".join(f"{name}: {reason}" for name, reason in self.refused)


def is_busy(upstream: Upstream) -> bool:
    return upstream.in_flight >= upstream.capacity


def build_plan(model: str, upstreams: list[Upstream], caller: Any = None) -> Plan:
    plan = Plan(model)
    lan: list[Upstream] = []
    rented: list[Upstream] = []
    for upstream in upstreams:
        if upstream.upstream_model(model) is None:
            continue
        reason = upstream.ineligible_reason() if caller is None else upstream.ineligible_reason_for(caller)
        if reason:
            plan.refused.append((upstream.display_name(), reason))
            continue
        (rented if upstream.kind == "rented" else lan).append(upstream)
    lan.sort(key=lambda u: (u.load(), u.kind != "engine"))
    all_busy = bool(lan) and all(is_busy(u) for u in lan)
    prefer = [u for u in rented if u.policy() == "prefer"]
    overflow = [u for u in rented if u.policy() == "overflow"]
    fallback = [u for u in rented if u.policy() == "when-no-local-node"]
    for upstream in rented:
        if upstream.policy() == "never":
            plan.refused.append((upstream.display_name(), "routing policy is 'never'"))
    ordered = prefer + (overflow + lan if all_busy else lan + overflow) + fallback
    plan.candidates = ordered
    return plan
