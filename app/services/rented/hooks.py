"""Hooks for lifecycle controllers (a provider's own, or the provider loop, provider_loop.py).

A controller registers callables on ``RentedManager.hooks``; Pairwise calls them:

- ``before_route``: ``async (node: RentedUpstream) -> None``, awaited before a request is sent
  to ``node`` (only when the list is non-empty), within the node's cold-start budget. For wake on
  request: a paused managed node with ``lifecycle.wake_on_request`` is eligible as soon as a hook is
  registered, and the hook resumes it (then ``node.set_state_word(...)``); the request itself then
  waits out the cold start (X-Scale-Up-Timeout and 503 retries). Raise ``UpstreamError`` to fail
  over instead (e.g. the resume was refused).
- ``on_workload_finished``: ``(node, job: dict) -> None`` after each workload the node served ends,
  with its record (``cost_usd`` filled in). For idle timers.
- ``on_budget_reached``: ``async (node, reason: str) -> None`` once when a budget cap is reached
  (the node is already ineligible with ``reason``); pause the endpoint here.
- ``confirms_pause``: ``(node) -> bool``: this controller pauses ``node`` on its provider at a cap and
  says when the provider confirms it: the manager then holds the node's ``BudgetPaused`` until
  ``budget_pause_confirmed(name)`` is called (the user is told "paused" only once it is).
- ``on_sponsor_exit``: ``async (node) -> None`` for each node with ``pause_on_sponsor_exit``, run
  first when the sponsor stops (while the network is still up).
- ``before_detach``: ``async (node, force: bool) -> None`` before a detach is decided: pause a
  billing endpoint first, or raise (``RefusedError``) to refuse unless ``force``.
- ``on_detach``: ``async (node) -> None`` before a node is detached.
- ``on_recheck``: ``() -> None``: ask the provider about every node now (the machine woke from sleep).
- ``row_extras``: ``(node) -> dict``, merged into the node's local row (``rented show``): what a
  controller knows that the declaration does not (a batch window's stage and end).
- ``account_keys``: ``(decl) -> str | None``: the provider's identity of what ``decl`` rents (a managed
  endpoint's API host and namespace/name, a window's job id...), the key of its spend account; None: not mine.
- ``resolvers``: ``async (decl: RentedDecl, token: str | None) -> RentedDecl``; called on attach,
  apply and start for a declaration by ``endpoint: NS/NAME`` (no url): fill ``url``,
  ``gpu``, ``price_per_hour`` from the provider's API (and set state through the manager after).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.services.errors import UpstreamError
from app.services.guard import Tell, guarded

if TYPE_CHECKING:
    from app.services.api.rows import WindowExtras
    from app.services.rented.decl import RentedDecl
    from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)

NodeHook = Callable[["RentedUpstream"], Awaitable[None]]
FinishedHook = Callable[["RentedUpstream", dict[str, Any]], None]
BudgetHook = Callable[["RentedUpstream", str], Awaitable[None]]
Resolver = Callable[["RentedDecl", "str | None"], Awaitable["RentedDecl"]]
DetachGuard = Callable[["RentedUpstream", bool], Awaitable[None]]
AccountKey = Callable[["RentedDecl"], "str | None"]


@dataclass
class LifecycleHooks:
    before_route: list[NodeHook] = field(default_factory=list)
    on_workload_finished: list[FinishedHook] = field(default_factory=list)
    on_budget_reached: list[BudgetHook] = field(default_factory=list)
    confirms_pause: list[Callable[[RentedUpstream], bool]] = field(default_factory=list)
    on_sponsor_exit: list[NodeHook] = field(default_factory=list)
    before_detach: list[DetachGuard] = field(default_factory=list)
    on_detach: list[NodeHook] = field(default_factory=list)
    on_recheck: list[Callable[[], None]] = field(default_factory=list)
    account_keys: list[AccountKey] = field(default_factory=list)
    resolvers: list[Resolver] = field(default_factory=list)
    row_extras: list[Callable[[RentedUpstream], WindowExtras]] = field(default_factory=list)
    # Set by the manager: called when a request leaves for the node (starts the cost meter), and when
    # that attempt failed before it was served (stops it; the time counts on the account).
    began: Callable[[RentedUpstream, str], None] = lambda node, job_id: None
    abandoned: Callable[[RentedUpstream, str], None] = lambda node, job_id: None
    # Set by the manager: tells a failed hook (a Notice on the bus).
    tell: Tell | None = None

    async def run_before_route(self, node: RentedUpstream, budget_s: float) -> None:
        try:
            async with asyncio.timeout(max(budget_s, 0.001)):
                for hook in list(self.before_route):
                    await hook(node)
        except TimeoutError:
            raise UpstreamError(f"rented node {node.name} did not wake within its cold-start budget of "
                                f"{node.decl.cold_start_s:g} s") from None

    # A controller's bug must not break the request path nor keep the other hooks from running; a
    # failed budget or exit hook may leave a GPU billing, so the manager tells it (``tell``).
    def workload_finished(self, node: RentedUpstream, job: dict[str, Any]) -> None:
        for hook in list(self.on_workload_finished):
            with guarded(f"on_workload_finished hook of {node.name}", log, self.tell):
                hook(node, job)

    async def run_each(self, hooks: list[NodeHook], node: RentedUpstream, what: str) -> None:
        for hook in list(hooks):
            with guarded(f"{what} hook of {node.name}", log, self.tell):
                await hook(node)

    async def budget_reached(self, node: RentedUpstream, reason: str) -> None:
        for hook in list(self.on_budget_reached):
            with guarded(f"on_budget_reached hook of {node.name}", log, self.tell):
                await hook(node, reason)
