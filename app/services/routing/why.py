"""Why a request went where it went, in one line a person can read: what fit (the request's
estimated size and the windows involved), which policy or load chose, whether a conversation's
affinity kept it, and which copies failed before it. Recorded in the job (``route``) and sent back
as ``X-Pairwise-Route``. Never any of the request's text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from app.services.backends.base import Upstream

if TYPE_CHECKING:
    from app.services.routing.fit import RequestSize


class Plan(Protocol):
    """What the explanation reads of a plan (``routing/plan.py::Plan``, which calls it)."""

    candidates: list[Upstream]
    size: RequestSize | None
    too_small: list[tuple[str, int, str]]
    windows: dict[str, int | None]
    counted: dict[str, int]
    affine: str | None

MAX_ROUTE = 600


def window_text(window: int | None) -> str:
    return f"window {window}" if window is not None else "window unknown"


def explain(plan: Plan, chosen: Upstream, failures: list[str]) -> str:
    parts: list[str] = []
    name = chosen.display_name()
    window = plan.windows.get(chosen.key)
    if plan.size is not None:
        fit = f"fit: ~{plan.size.total} tokens"
        if plan.size.room:
            fit += f" ({plan.size.prompt} prompt + {plan.size.room} for the answer)"
        fit += f", {name} {window_text(window)}"
        if chosen.key in plan.counted:
            fit += f" (its tokenizer counts {plan.counted[chosen.key]})"
        if plan.too_small:
            fit += "; too small: " + ", ".join(f"{n} (window {w})" for n, w, _ in plan.too_small)
        parts.append(fit)
    if plan.affine == chosen.key:
        parts.append("affinity: the conversation's last turn was served here")
    elif chosen.kind == "rented":
        lan_small = any(kind != "rented" for _, _, kind in plan.too_small)
        policy = chosen.policy() or "?"
        because = "no local copy holds it" if lan_small else "no local copy could serve"
        parts.append(f"policy: {policy}" + ("" if policy == "prefer" else f" ({because})"))
    elif len(plan.candidates) > 1:
        parts.append(f"load: {chosen.in_flight} of {chosen.capacity} in flight on {name}")
    else:
        parts.append(f"only copy: {name}")
    if failures:
        parts.append("failover: " + "; ".join(failures))
    text = " | ".join(parts)
    return text if len(text) <= MAX_ROUTE else text[: MAX_ROUTE - 3] + "..."
