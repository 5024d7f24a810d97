"""Billed minutes of one endpoint, as Hugging Face counts them, from what the management API shows.

HF bills while an endpoint is initializing or running, per started minute of each contiguous
billed stretch (hf-api.md §1.6, §1.7). The sponsor sees states only when it polls, so it errs on the
side of spending: a stretch is taken to start at the last moment the endpoint was seen *not* billed
(the earliest it can have started), and a minute is charged the moment it starts. The meter can then
run ahead of HF's bill, never behind it, so a budget cap is reached no later than HF reaches it.

This counts locally when the next minute starts (so the lifecycle wakes then); what is charged is
decided by the endpoint's spend account (app/services/rented/spend.py), which keeps the stretch across
restarts and sponsors, and ``align`` takes its view back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.services.hf.models import BILLED_STATES


@dataclass
class BilledMinutes:
    minute_s: float
    stretch_start: float | None = None  # monotonic; None while not billed
    charged: int = 0  # minutes of the current stretch already charged
    last_unbilled_at: float | None = None

    @property
    def billing(self) -> bool:
        return self.stretch_start is not None

    def observe(self, state: str | None, at: float) -> None:
        """The endpoint was in ``state`` at (or after) ``at``: the time the request that showed it was sent."""
        if state in BILLED_STATES:
            if self.stretch_start is None:
                self.stretch_start = self.last_unbilled_at if self.last_unbilled_at is not None else at
                self.charged = 0
        else:
            self.stretch_start = None
            self.charged = 0
            self.last_unbilled_at = at

    def due(self, now: float) -> int:
        """Minutes started since the last call and not yet charged (charging them)."""
        if self.stretch_start is None:
            return 0
        started = math.floor(max(0.0, now - self.stretch_start) / self.minute_s) + 1
        new = max(0, started - self.charged)
        self.charged = max(self.charged, started)
        return new

    def align(self, start: float, charged: int) -> None:
        """Take the stretch as the shared spend account has it (another sponsor may have charged it)."""
        self.stretch_start, self.charged = start, charged

    def next_minute_in(self, now: float) -> float | None:
        if self.stretch_start is None:
            return None
        return max(0.0, self.stretch_start + self.charged * self.minute_s - now)
