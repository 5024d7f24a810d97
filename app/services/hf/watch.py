"""One watched Hugging Face endpoint: what the lifecycle controller knows and still owes HF."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.services.hf.billing import BilledMinutes

if TYPE_CHECKING:
    from app.services.rented.upstream import RentedUpstream

STARTING = ("pending", "initializing", "updating")
# Idle pause also takes a scaled-to-zero endpoint: it still holds GPU quota and wakes on any request.
PAUSABLE_IDLE = ("pending", "initializing", "updating", "running", "scaledToZero")
# States the budget cap pauses: billing, about to bill, or woken by any caller with a token.
OVER_CAP_PAUSES = PAUSABLE_IDLE
DRIFT_PREFIX = "drifted: "


def is_hf_endpoint(node: RentedUpstream) -> bool:
    return node.decl.provider == "huggingface-endpoint" and bool(node.decl.endpoint)


def split_endpoint(value: str) -> tuple[str, str]:
    namespace, _, name = value.partition("/")
    return namespace, name


@dataclass
class Watch:
    name: str
    namespace: str
    endpoint: str
    billing: BilledMinutes
    last_activity: float  # monotonic
    hf_state: str | None = None
    next_poll: float = 0.0
    pause_reason: str | None = None  # budget | idle | start | exit | user | price | detach | logout: owed to HF
    pause_detail: str = ""
    next_pause_try: float = 0.0
    error: str | None = None  # the last management-API failure, until a call succeeds
    pause_failed: str | None = None  # why the owed pause could not be sent (a notice each minute)
    next_owed_notice: float = 0.0
    owed_since: float | None = None  # wall clock: when the pause owed now was decided
    observed_sent: float = float("-inf")  # when the request behind the latest answer taken in was sent
    poll_task: asyncio.Task[None] | None = None  # a status poll in flight (never holds up a pause)
    pause_task: asyncio.Task[None] | None = None  # a pause in flight
    saved_stretch: dict[str, Any] | None = None  # the account's open stretch when watching began
    compute: str | None = None  # what HF runs it on, as last priced
    reprice: bool = False  # HF's price changed: charge the difference now
    price_seen_at: float | None = None  # when HF's list last gave the price charged (lifecycle clock)
    activity_dirty: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    answered: asyncio.Event = field(default_factory=asyncio.Event)  # set at each answer from HF, for waiters
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    def busy(self) -> bool:
        return any(not t.done() for t in self.tasks)

    def polling(self) -> bool:
        return self.poll_task is not None and not self.poll_task.done()

    def pausing(self) -> bool:
        return self.pause_task is not None and not self.pause_task.done()
