"""What the batch room reads of a node, and what a run and the money read of the service, as
Protocols: the room never names ``Node`` (whose ``batches`` field holds the service), and
``runner.py`` and ``money.py`` never name ``BatchService`` (which makes them), so none of them
import each other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from app.services.keys.auth import CallerNode

if TYPE_CHECKING:
    from app.home import Home
    from app.services.backends.base import Upstream
    from app.services.batch.lines import Request
    from app.services.batch.store import BatchStore
    from app.services.frontdoor.control import ControlRoute
    from app.services.inference import InferenceService
    from app.services.jobs.records import Workload
    from app.services.jobs.store import JobStore
    from app.services.rented.manager import RentedManager

Hook = Callable[[], Awaitable[None]]


class BatchNode(CallerNode, Protocol):
    """service.py, runner.py, money.py, plan.py, routes.py: the node's home, its inference path, its
    workload records, its rented nodes and their providers (a budget pauses them, a plan prices a window)."""

    home: Home
    inference: InferenceService
    jobs: JobStore
    rented: RentedManager | None  # its providers' own services too (a plan prices a window through them)


class AttachNode(BatchNode, Protocol):
    """``attach_batch``: where the feature hangs its loopback routes and its start and stop."""

    extra_door_routes: list[ControlRoute]
    start_hooks: list[Hook]
    stop_first: list[tuple[str, Hook]]
    stop_last: list[Hook]


class RunCopies(Protocol):
    """What the money and the service do to a batch's run: leave a copy, take its queued lines."""

    def uses(self, kind: str) -> list[Upstream]: ...

    def leave(self, upstream_key: str) -> None: ...

    def take_all(self, model: str) -> list[Request]: ...


class BatchBook(Protocol):
    """money.py: a batch's private record, and the runs (to leave rented copies at the budget)."""

    @property
    def runs(self) -> Mapping[str, RunCopies]: ...

    def internal(self, batch_id: str) -> dict[str, Any]: ...

    def save_internal(self, batch_id: str, internal: dict[str, Any]) -> None: ...


class RunService(BatchBook, Protocol):
    """runner.py: the batch's status and store, and the service's rules for its lines."""

    node: BatchNode
    store: BatchStore

    def status(self, batch_id: str) -> str: ...

    def validate(self, batch_id: str) -> None: ...

    def finalize(self, batch_id: str) -> None: ...

    def ending_reason(self, batch_id: str) -> tuple[str, str] | None: ...

    def end_pending(self, batch_id: str, reason: tuple[str, str]) -> None: ...

    def no_copy(self, batch_id: str, model: str, refusals: str, run: RunCopies) -> None: ...

    def may_use(self, batch_id: str, upstream: Upstream) -> bool: ...

    def served(self, batch_id: str, upstream: Upstream, job: Workload | None, seconds: float) -> None: ...
