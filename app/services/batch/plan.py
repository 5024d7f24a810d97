"""``plan``: before a batch runs, what it is and what it would take.

Tokens are estimated from the text (about four characters a token) and each line's own limit on
its answer (``max_tokens``, ``max_completion_tokens``, ``num_predict``; ``ASSUMED_ANSWER_TOKENS``
where a line sets none). Time on the cluster comes from each copy's measured rate: a run of this
node that used the copy lately, or else a short probe (the file's first request, sent to each copy
at its batch share, at most ``PROBE_AT_ONCE`` at a time). Rented copies are left out of the local
time. When a deadline cannot be met so, the cheapest GPU of the providers of batch windows is
proposed as a window lasting until the deadline (shorter if the budget cannot pay for it), priced by
the rented create path itself (its ``plan``), so the cost shown is the cost ``batch run --rent``
starts. What a window adds to the rate is not known until it runs: the plan says so.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import TYPE_CHECKING, TypedDict

from app.services.backends.base import Caller, Upstream
from app.services.batch.copies import share
from app.services.batch.lines import Request, parse_input
from app.services.batch.shapes import ENDPOINTS
from app.services.errors import ConfigError, PairwiseError
from app.services.rented.operations import WINDOWS
from app.services.translate.shapes import canonical_model

if TYPE_CHECKING:
    from app.services.api.plans import WindowFlavor
    from app.services.batch.service import BatchService

ASSUMED_ANSWER_TOKENS = 256
PROBE_AT_ONCE = 4
PROBE_ROUNDS = 2


class CopyPlan(TypedDict):
    copy: str
    kind: str
    lines_per_s: float
    measured_by: str  # "batch" (a run of this node) or "probe"


class RentPlan(TypedDict):
    name: str
    provider: str  # the declaration's provider of the window (the CLI names it in words)
    gpu: str
    gpu_description: str
    window: str
    window_minutes: int
    price_per_hour: float
    window_cost_usd: float
    model: str


class BatchPlan(TypedDict):
    lines: int
    bad_lines: int
    model: str | None
    endpoint: str
    prompt_tokens: int
    completion_tokens: int
    copies: list[CopyPlan]
    lines_per_s: float
    local_time_s: float | None
    deadline_s: float | None
    meets_deadline: bool | None
    rent: RentPlan | None
    rent_note: str | None


def endpoint_of(content: bytes) -> str:
    """The endpoint the file's lines name (its first line with a known url)."""
    for raw in content.split(b"\n"):
        try:
            url = json.loads(raw).get("url")
        except (ValueError, AttributeError):
            continue
        if url in ENDPOINTS:
            return str(url)
    return "/v1/chat/completions"


def estimate_tokens(request: Request) -> tuple[int, int]:
    body = request.body
    text = 0
    for key in ("messages", "prompt", "input", "system"):
        value = body.get(key)
        if value is not None:
            text += len(str(value))
    options = body.get("options") if isinstance(body.get("options"), dict) else {}
    limit = next((v for v in (body.get("max_completion_tokens"), body.get("max_tokens"),
                              (options or {}).get("num_predict")) if isinstance(v, int) and v > 0), None)
    answer = 0 if request.operation == "embed" else (limit or ASSUMED_ANSWER_TOKENS)
    return max(1, math.ceil(text / 4)), answer


async def plan_batch(service: BatchService, content: bytes, *, deadline_s: float | None,
                     budget_usd: float | None, caller: Caller) -> BatchPlan:
    endpoint = endpoint_of(content)
    parsed = parse_input(content, endpoint)
    requests = [line for line in parsed.lines if isinstance(line, Request)]
    prompt = completion = 0
    for request in requests:
        p, c = estimate_tokens(request)
        prompt, completion = prompt + p, completion + c
    model = requests[0].model if requests else None
    copies: list[CopyPlan] = []
    if requests:
        plan = await service.node.inference.plan_for(canonical_model(requests[0].model), caller)
        for upstream in plan.candidates:
            if upstream.kind == "rented":
                continue
            copies.append(await _rate(service, upstream, requests[0], caller))
    rate = sum(c["lines_per_s"] for c in copies)
    local_time = len(requests) / rate if rate > 0 else None
    meets = None if deadline_s is None else (local_time is not None and local_time <= deadline_s)
    result: BatchPlan = {
        "lines": len(requests), "bad_lines": len(parsed.lines) - len(requests), "model": model,
        "endpoint": endpoint, "prompt_tokens": prompt, "completion_tokens": completion, "copies": copies,
        "lines_per_s": round(rate, 3), "local_time_s": round(local_time, 1) if local_time is not None else None,
        "deadline_s": deadline_s, "meets_deadline": meets, "rent": None, "rent_note": None,
    }
    if requests and not copies:
        result["meets_deadline"] = None
        result["rent_note"] = (f"no engine or peer of the cluster serves '{model}' now (pairwise nodes lists what "
                               "each serves); a rented node that does would serve it at its own rate")
    elif meets is False and deadline_s is not None and model is not None:
        result["rent"], result["rent_note"] = await _rent_option(service, model, deadline_s, budget_usd)
    return result


async def _rate(service: BatchService, upstream: Upstream, request: Request, caller: Caller) -> CopyPlan:
    measured = service.measured_rate(upstream.key)
    if measured is not None:
        return {"copy": upstream.display_name(), "kind": upstream.kind, "lines_per_s": round(measured, 3),
                "measured_by": "batch"}
    at_once = min(share(upstream), PROBE_AT_ONCE)
    began = time.monotonic()
    done = 0
    for _ in range(PROBE_ROUNDS):
        answers = await asyncio.gather(*(service.node.inference.run(request.api, request.operation, request.body,
                                                                   caller, pin=upstream.key) for _ in range(at_once)))
        done += sum(1 for a in answers if a.status == 200)
    elapsed = max(time.monotonic() - began, 1e-3)
    # The probe ran at most PROBE_AT_ONCE at a time; the copy's share of the batch scales it.
    rate = done / elapsed * share(upstream) / at_once
    return {"copy": upstream.display_name(), "kind": upstream.kind, "lines_per_s": round(rate, 3),
            "measured_by": "probe"}


async def _rent_option(service: BatchService, model: str, deadline_s: float,
                       budget_usd: float | None) -> tuple[RentPlan | None, str]:
    offers = WINDOWS.among(service.node.rented.providers if service.node.rented is not None else None)
    if not offers:
        return None, ("the deadline cannot be met here, and no rented GPU can be proposed: no provider of batch "
                      "windows is set up")
    if "/" not in model:
        return None, (f"the deadline cannot be met here; to rent a GPU for it, name the model as its provider's "
                      f"repository (OWNER/NAME), not {model!r}")
    # The cheapest GPU of every provider that starts windows (ties: the provider first by name); one whose
    # list cannot be read is left out, and named only when no list could be read.
    gpus: list[tuple[float, str, WindowFlavor]] = []
    unread: PairwiseError | None = None
    for provider, ops in sorted(offers.items()):
        try:
            gpus.extend((f["window_price_per_hour"], provider, f) for f in await ops.flavors() if f["gpu"])
        except PairwiseError as exc:
            unread = unread or exc
    if not gpus and unread is not None:
        return None, f"the deadline cannot be met here; the provider's GPU list could not be read: {unread.message}"
    if not gpus:
        return None, "the deadline cannot be met here, and the provider lists no GPU for batch windows"
    price, provider, cheapest = min(gpus, key=lambda g: (g[0], g[1]))
    minutes = max(1, math.ceil(deadline_s / 60))
    if budget_usd is not None:
        minutes = min(minutes, int(budget_usd / price * 60))
        if minutes < 1:
            return None, f"the budget ${budget_usd:.2f} cannot pay for one minute of the cheapest GPU ({cheapest['name']})"
    name = f"batch-{int(time.time()) % 10_000_000}"
    try:
        window = await offers[provider].plan({"name": name, "model": model, "gpu": cheapest["name"],
                                              "window": f"{minutes}m"})
    except ConfigError as exc:
        return None, f"the deadline cannot be met here; the cheapest window is refused: {exc.message}"
    # ``provider``: the one whose operations planned it, so ``batch run --rent`` starts it there.
    rent: RentPlan = {"name": name, "provider": provider, "gpu": window["gpu"], "gpu_description": window["gpu_description"],
                      "window": window["window"], "window_minutes": window["window_minutes"],
                      "price_per_hour": window["price_per_hour"], "window_cost_usd": window["window_cost_usd"],
                      "model": model}
    return rent, ("the cheapest GPU its provider has for a window until the deadline; how much it speeds the "
                  "batch is measured once it runs")
