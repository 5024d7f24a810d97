"""Which upstreams may serve a model, in which order. Pure decisions, no I/O.

LAN owners (local engines and peers) are ordered by load: requests in flight
relative to capacity. Rented owners join by their policy:

    prefer               ahead of every LAN owner
    overflow             after the LAN owners; ahead of them when all are busy
    when-no-local-node   only when no LAN owner is up (including after they fail)
    never                attached, never routed

Each rented owner that cannot serve is listed with the reason, so a refusal can
say which nodes were considered and why they were not used. Given the request's
size (``fit.py``), a copy whose window cannot hold it is no candidate at all, so
for the rented policies it does not count as a local node that has the model.
A conversation's next turn goes first to the copy that served its last one
(``affinity.py``) while that copy's load allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.services.backends.base import Upstream
from app.services.routing.affinity import prefer_affine
from app.services.routing.fit import Copies, RequestSize, copies_of, holds
from app.services.routing.why import explain

# What marks a 403 as a refusal by a node's rules, for whoever reads it back over the relay.
REFUSED_HERE = " cannot be served here: "


@dataclass
class Plan:
    model: str
    candidates: list[Upstream] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    size: RequestSize | None = None
    too_small: list[tuple[str, int, str]] = field(default_factory=list)  # (copy, its window, its kind)
    windows: dict[str, int | None] = field(default_factory=dict)  # upstream key -> window, of the candidates
    counted: dict[str, int] = field(default_factory=dict)  # upstream key -> the request's size by its tokenizer
    affine: str | None = None  # the upstream key the conversation was moved to, if it was

    def too_small_text(self, requested: str) -> str:
        """No copy holds the request: the model, its estimated size and each copy's window."""
        assert self.size is not None
        windows = ", ".join(f"{name} holds {window}" for name, window, _ in self.too_small)
        asked = f" ({self.size.prompt} prompt + {self.size.room} for the answer)" if self.size.room else ""
        text = (f"no copy of model '{requested}' can hold this request: about {self.size.total} tokens{asked}; "
                f"context windows: {windows}")
        if self.refused:
            text += f"; not considered: {self.refusal_text()}"
        return text

    def refusal_text(self) -> str:
        return "; ".join(f"{name}: {reason}" for name, reason in self.refused)

    def refused_answer(self, requested: str) -> str:
        """The 403's words when every copy is refused by a rule; a peer reads them back (``REFUSED_HERE``)."""
        return f"model '{requested}'{REFUSED_HERE}{self.refusal_text()}"

    def why(self, chosen: Upstream, failures: list[str] | None = None) -> str:
        """Why the request went to ``chosen`` (recorded in the job and sent as X-Pairwise-Route)."""
        return explain(self, chosen, failures or [])


def is_busy(upstream: Upstream) -> bool:
    return upstream.in_flight >= upstream.capacity


def build_plan(model: str, upstreams: list[Upstream], caller: Any = None, *, size: RequestSize | None = None,
               affine: str | None = None, exact: Mapping[str, RequestSize] | None = None,
               copies: Copies | None = None) -> Plan:
    """``exact``: the request's size on a copy whose engine counted its tokens (``fit.exact_sizes``);
    ``copies``: ``fit.copies_of(upstreams, model, size)`` when the caller has it already."""
    plan = Plan(model, size=size)
    lan: list[Upstream] = []
    rented: list[Upstream] = []
    for upstream, window in copies_of(upstreams, model, size) if copies is None else copies:
        reason = upstream.ineligible_reason() if caller is None else upstream.ineligible_reason_for(caller)
        if reason:
            plan.refused.append((upstream.display_name(), reason))
            continue
        if size is not None:
            counted = exact.get(upstream.key) if exact else None
            if counted is not None:
                plan.counted[upstream.key] = counted.total
            if not holds(window, counted or size) and window is not None:
                plan.too_small.append((upstream.display_name(), window, upstream.kind))
                continue
            plan.windows[upstream.key] = window
        (rented if upstream.kind == "rented" else lan).append(upstream)
    if len(lan) > 1:
        lan.sort(key=lambda u: (u.load(), u.kind != "engine"))
    plan.candidates = prefer_affine(_with_rented(plan, lan, rented) if rented else lan, affine)
    if affine is not None and plan.candidates and plan.candidates[0].key == affine:
        plan.affine = affine
    return plan


def _with_rented(plan: Plan, lan: list[Upstream], rented: list[Upstream]) -> list[Upstream]:
    """The LAN copies (ordered by load) and the rented ones, each where its policy puts it."""
    all_busy = bool(lan) and all(is_busy(u) for u in lan)
    prefer = [u for u in rented if u.policy() == "prefer"]
    overflow = [u for u in rented if u.policy() == "overflow"]
    fallback = [u for u in rented if u.policy() == "when-no-local-node"]
    for upstream in rented:
        if upstream.policy() == "never":
            plan.refused.append((upstream.display_name(), "routing policy is 'never'"))
    return prefer + (overflow + lan if all_busy else lan + overflow) + fallback
