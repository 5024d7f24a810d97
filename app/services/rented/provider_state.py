"""The provider seam's values (rented/provider.py): a provider's state normalised, its actions, its price."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class WireTraits:
    """What a node's upstream needs of its provider on the request path (``RentedUpstream``), fixed when
    the node is made: so the upstream never tests which provider it is."""

    states: Mapping[str, State] = field(default_factory=dict)  # the provider's own words for its states
    per_token: bool = False  # billed per token of each answer, not per hour
    declared_models: bool = False  # the declaration's models win over /v1/models (a router lists them all)
    wait_header: str | None = None  # tells the provider's proxy how long to hold a request while it starts
    warms_on_503: bool = False  # a 503 always means "still starting" (wait it out within the cold start)
    state_polled: bool = False  # its state comes from a management API: no probe once both are known
    url_is_identity: bool = True  # its URL names what is rented (the spend account's key); False: new each time
    health_first: bool = False  # its proxy answers /health without waking it: asked first, and only while running
    asks_info: bool = False  # it may run TGI: /info is asked for a context window the model list does not give
    lists_token_prices: bool = False  # its /v1/models gives each model's per-token prices (per_token.py)
