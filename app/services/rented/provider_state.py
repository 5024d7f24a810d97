"""The provider seam's values (rented/provider.py): a provider's state normalised, its actions, its price."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class State(StrEnum):
    """A provider's state as the scheduler and the views see it."""

    RUNNING = "running"  # answers now
    COLD = "cold"  # scaled to zero: the next request waits for a start
    STARTING = "starting"
    PAUSED = "paused"
    FAILED = "failed"
    ENDED = "ended"  # a fixed window is over
    UNKNOWN = "unknown"  # not reported (an endpoint nobody manages: its probe says what it can)


# What the scheduler calls each state (``RentedUpstream.status``).
SCHEDULER_STATE: dict[State, str] = {
    State.RUNNING: "eligible", State.COLD: "cold", State.STARTING: "starting", State.PAUSED: "paused",
    State.FAILED: "unhealthy", State.ENDED: "ended", State.UNKNOWN: "eligible",
}


class Action(StrEnum):
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"
    DELETE = "delete"


@dataclass(frozen=True)
class ProviderState:
    state: State
    billing: bool  # the provider bills for it now
    message: str | None = None  # the provider's own words
    raw: str | None = None  # the provider's own name of the state


@dataclass(frozen=True)
class Price:
    """Hourly, or per 1M tokens; all None: unknown."""

    per_hour: float | None = None
    per_mtok_in: float | None = None
    per_mtok_out: float | None = None

    @property
    def per_token(self) -> bool:
        return self.per_mtok_in is not None or self.per_mtok_out is not None
