"""The billing ledger: what the simulated Hugging Face would charge.

Endpoints accrue billable time while `initializing` or `running` (hf-api.md §1.6); jobs while
RUNNING. Contiguous billable stretches (initializing then running) form one billing period, and each
period is billed per started simulated minute (ceil), each minute at the price in force when that
minute began: usd = Σ pricePerHour(minute start) / 60. A price or hardware change while billing
(POST /_sim/prices, /_sim/endpoints/.../mutate) starts a new stretch at the new price within the same
period, so it is charged from the next minute that starts. `updating` is not billed (a simplification; HF's old replica keeps
serving during a rolling update). Rows outlive their endpoint or job, so deletes keep their history.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stretch:
    state: str
    start: float
    end: float | None
    price_per_hour: float


@dataclass
class Meter:
    price_per_hour: float
    stretches: list[Stretch] = field(default_factory=list)

    def open(self, state: str, at: float, price_per_hour: float) -> None:
        self.close(at)
        self.price_per_hour = price_per_hour
        self.stretches.append(Stretch(state, at, None, price_per_hour))

    def close(self, at: float) -> None:
        if self.stretches and self.stretches[-1].end is None:
            self.stretches[-1].end = at

    def periods(self, now: float) -> list[tuple[float, float, list[tuple[float, float]]]]:
        """(start, end, [(stretch start, price)...]) of each run of contiguous stretches."""
        out: list[tuple[float, float, list[tuple[float, float]]]] = []
        for s in self.stretches:
            end = now if s.end is None else s.end
            if out and abs(out[-1][1] - s.start) < 1e-9:
                out[-1] = (out[-1][0], end, [*out[-1][2], (s.start, s.price_per_hour)])
            else:
                out.append((s.start, end, [(s.start, s.price_per_hour)]))
        return out

    def totals(self, now: float, minute_s: float) -> tuple[int, float]:
        minutes, usd = 0, 0.0
        for start, end, prices in self.periods(now):
            # round() absorbs float noise so exactly 2 minutes does not become 3.
            started = math.ceil(round((end - start) / minute_s, 6)) if end > start else 0
            minutes += started
            for i in range(started):
                at = start + i * minute_s
                usd += next((p for s, p in reversed(prices) if s <= at + 1e-9), prices[0][1]) / 60
        return minutes, usd

    def as_json(self, now: float, minute_s: float, origin: float) -> dict[str, Any]:
        minutes, usd = self.totals(now, minute_s)
        return {
            "billed_minutes": minutes, "usd": round(usd, 6), "price_per_hour": self.price_per_hour,
            "stretches": [{"state": s.state, "start": round(s.start - origin, 6),
                           "end": None if s.end is None else round(s.end - origin, 6)} for s in self.stretches],
        }


@dataclass
class RouterTally:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0
    by_model: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, key: str, prompt: int, completion: int, price_in: float, price_out: float) -> None:
        cost = (prompt * price_in + completion * price_out) / 1_000_000
        self.requests += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.usd += cost
        row = self.by_model.setdefault(key, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "usd": 0.0})
        row["requests"] += 1
        row["prompt_tokens"] += prompt
        row["completion_tokens"] += completion
        row["usd"] = round(row["usd"] + cost, 9)

    def as_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "usd": round(self.usd, 9), "by_model": self.by_model}


@dataclass
class Ledger:
    origin: float
    endpoints: dict[str, Meter] = field(default_factory=dict)
    jobs: dict[str, Meter] = field(default_factory=dict)
    router: RouterTally = field(default_factory=RouterTally)

    def meter(self, table: dict[str, Meter], key: str, price_per_hour: float) -> Meter:
        return table.setdefault(key, Meter(price_per_hour))

    def as_json(self, now: float, minute_s: float) -> dict[str, Any]:
        endpoints = {k: m.as_json(now, minute_s, self.origin) for k, m in self.endpoints.items()}
        jobs = {k: m.as_json(now, minute_s, self.origin) for k, m in self.jobs.items()}
        total = sum(r["usd"] for r in endpoints.values()) + sum(r["usd"] for r in jobs.values()) + self.router.usd
        return {"endpoints": endpoints, "jobs": jobs, "router": self.router.as_json(),
                "minute_s": minute_s, "now": round(now - self.origin, 6), "total_usd": round(total, 6)}
