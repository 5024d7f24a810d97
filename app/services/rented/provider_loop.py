"""``ProviderLoop``: the one loop that drives every managed rented node, however many providers there are.

One task ticks every provider's ``Controller`` (rented/controller.py) and sleeps until the soonest
thing any of them has due, or until kicked (a node attached or changed, a call ended, the machine
woke). A wall-clock jump is told once here (billing never used it: rented/timebase.py).

A provider with ``polls`` is driven by the loop's own controller, ``PolledNodes``: every ``poll_s``
it asks each such node's provider for its state (one call per node, under a timeout) and then:

- **bill**: while the provider says ``billing``, every started billed minute (``PAIRWISE_BILLING_MINUTE_S``,
  60 s) is charged at once to the node's spend account (``CostMeter.bill``: the stretch is the account's,
  shared with every sponsor of the machine). A stretch is taken to start when the node was last seen not
  billing (the earliest it can have begun), so the meter runs ahead of the provider's bill, never behind;
  a poll that fails keeps charging a stretch that was open (the provider may still bill).
- **cap**: after each charge ``RentedManager.check_budget``; at a cap the manager runs the budget hooks,
  where this loop asks the provider to pause; a node over its cap that still bills (resumed elsewhere) is
  paused again at every poll. ``BudgetPaused`` is published once the provider reports it paused
  (``confirms_pause``).
- pause on sponsor exit (``stop_for_exit``) and a detach that pauses a billing node first.

A provider whose nodes need more than a poll gives the loop a controller of its own
(``Provider.controller``: a managed endpoint's drift and price, a batch window's own clock).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from app.environment import environment
from app.services.errors import PairwiseError, RefusedError
from app.services.events import EventBus, NodeChanged, Notice
from app.services.guard import FailureNotices, guarded
from app.services.rented.controller import BaseController, Controller
from app.services.rented.provider import Provider
from app.services.rented.provider_state import ProviderState, State
from app.services.rented.timebase import describe_jump, steady, timebase

if TYPE_CHECKING:
    from app.services.rented.manager import RentedManager
    from app.services.rented.upstream import RentedUpstream

log = logging.getLogger(__name__)
IDLE_SLEEP_S = 30.0  # with nothing due, the loop sleeps this long (an attach or a change kicks it)


def billing_minute_s() -> float:
    return environment().number("PAIRWISE_BILLING_MINUTE_S", 60.0, minimum=0.001)


class ProviderLoop:
    def __init__(self, manager: RentedManager, bus: EventBus, *, minute_s: float | None = None,
                 poll_s: float | None = None) -> None:
        self.manager, self.bus = manager, bus
        self.polled = PolledNodes(manager, bus, minute_s=minute_s, poll_s=poll_s)
        self._started: list[Controller] = []
        self._tells: dict[int, FailureNotices] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        manager.hooks.on_recheck.append(self.recheck_now)
        # A node attached or changed elsewhere (rented attach/set) is looked at without waiting a tick.
        bus.on(lambda event: self.kick() if isinstance(event, NodeChanged) else None)

    def controllers(self) -> list[Controller]:
        """The polled providers' controller and every provider's own (one each, however many providers share it)."""
        found: list[Controller] = [self.polled] if self.manager.providers.polled() else []
        for provider in self.manager.providers.all():
            if provider.controller is not None and all(provider.controller is not c for c in found):
                found.append(provider.controller)
        return found

    def kick(self) -> None:
        self._wake.set()

    def recheck_now(self) -> None:
        for controller in self._started:
            controller.recheck_now()
        self.kick()

    async def start(self) -> None:
        """After the manager's start (its nodes are installed): every controller takes its nodes in."""
        self._take_in()
        if self._started:
            self._task = asyncio.create_task(self._run(), name="provider-loop")

    def _take_in(self) -> None:
        for controller in self.controllers():
            if all(controller is not c for c in self._started):
                controller.bind(self.kick)
                self._tells[id(controller)] = FailureNotices(self.bus.publish)
                with guarded(f"starting {controller.what}", log, self._tells[id(controller)]):
                    controller.sync()
                self._started.append(controller)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for controller in self._started:
            with guarded(f"stopping {controller.what}", log, self._tells[id(controller)]):
                await controller.stop()

    async def _run(self) -> None:
        while True:
            self._clock_jumped()
            self._take_in()
            for controller in self._started:
                with guarded(controller.what, log, self._tells[id(controller)]):
                    controller.tick()
            # The wait runs in this task (no inner task, as wait_for made, left un-started when the
            # loop closes under it at quit).
            try:
                async with asyncio.timeout(self._sleep_s()):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()

    def _sleep_s(self) -> float:
        soonest = IDLE_SLEEP_S
        for controller in self._started:
            with guarded(controller.what, log, self._tells[id(controller)]):
                soonest = min(soonest, controller.sleep_s())
        return max(0.005, soonest)

    def _clock_jumped(self) -> None:
        """A wall-clock jump is told once: billing never used it."""
        moved = timebase().jumped()
        if moved is not None:
            message = describe_jump(moved)
            log.warning("%s", message)
            self.bus.publish(Notice(title="The system clock jumped", message=message, level="warning"))


class PolledNode:
    """What the loop keeps of one polled node: its poll in flight, and when the next is due."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.next_poll = 0.0
        self.tasks: set[asyncio.Task[None]] = set()


class PolledNodes(BaseController):
    """The controller of every provider that ``polls``: poll -> bill -> cap (the module's docstring)."""

    what = "the rented providers' loop"

    def __init__(self, manager: RentedManager, bus: EventBus, *, minute_s: float | None = None,
                 poll_s: float | None = None) -> None:
        super().__init__(log)
        self.manager, self.bus = manager, bus
        self.minute_s = minute_s or billing_minute_s()
        # Several polls per billed minute: a cap is acted on within the minute it is reached.
        self.poll_s = poll_s or environment().number("PAIRWISE_PROVIDER_POLL_S", min(30.0, self.minute_s / 4),
                                                     minimum=0.001)
        self._since: dict[str, float] = {}  # node -> wall-clock start of its open billing stretch
        self._unbilled_at: dict[str, float] = {}  # node -> when it was last seen not billing
        self._watches: dict[str, PolledNode] = {}
        hooks = manager.hooks
        hooks.on_budget_reached.append(self._budget_reached)
        hooks.confirms_pause.append(self.drives)
        hooks.on_sponsor_exit.append(self._sponsor_exit)
        hooks.before_detach.append(self._before_detach)

    def provider(self, node: RentedUpstream) -> Provider | None:
        if not self.manager.providers.known(node.decl.provider):
            return None
        provider = self.manager.providers.of(node.decl.provider)
        return provider if provider.polls else None

    def drives(self, node: RentedUpstream) -> bool:
        return node.decl.lifecycle.managed and self.provider(node) is not None

    def sync(self) -> None:
        current = {n.name for n in list(self.manager.nodes.values()) if self.drives(n)}
        for name in list(self._watches):
            if name not in current:
                for task in self._watches.pop(name).tasks:
                    task.cancel()
        for name in current:
            self._watches.setdefault(name, PolledNode(name))

    def watched(self) -> list[PolledNode]:
        return list(self._watches.values())

    def recheck_now(self) -> None:
        for watch in self._watches.values():
            watch.next_poll = 0.0

    def sleep_s(self) -> float:
        now, soonest = steady(), IDLE_SLEEP_S
        for watch in self._watches.values():
            if not watch.tasks:  # a poll in flight kicks the loop when it ends
                soonest = min(soonest, watch.next_poll - now)
        return soonest

    def tick(self) -> None:
        self.sync()
        now = steady()
        for watch in self._watches.values():
            node = self.manager.nodes.get(watch.name)
            if node is not None and not watch.tasks and now >= watch.next_poll:
                watch.next_poll = now + self.poll_s
                self.spawn(watch, self._one(node))

    async def _one(self, node: RentedUpstream) -> None:
        with guarded(f"polling rented node {node.name}", log, self.manager.hooks.tell):
            provider = self.provider(node)
            if provider is None:
                return
            sent = steady()
            try:
                async with asyncio.timeout(max(self.poll_s * 4, 5.0)):
                    state = await provider.poll(node)
            except (PairwiseError, TimeoutError) as exc:
                node.last_error = node.scrub(f"its provider did not answer: {exc}")
                if node.name in self._since:  # it may still bill: keep counting
                    self._bill(node, provider)
                return
            self._seen(node, provider, state, sent)

    def _seen(self, node: RentedUpstream, provider: Provider, state: ProviderState, sent: float) -> None:
        before = node.reported
        node.reported = state
        if state.billing:
            self._since.setdefault(node.name, self._unbilled_at.get(node.name, sent))
            self._bill(node, provider)
            if node.budget_reason is not None and node.decl.lifecycle.managed:
                self._pause_soon(node, provider)  # a cap is a standing rule: resumed elsewhere, paused again
        else:
            if node.name in self._since:
                self._bill(node, provider, now=sent)  # the minutes started before it was seen not billing
                del self._since[node.name]
            self._unbilled_at[node.name] = sent
            self.manager.meter.unbilled(node.name, sent)
            if state.state is State.PAUSED:
                confirmed = self.manager.budget_pause_confirmed(node.name)
                if confirmed is not None:
                    self.bus.publish(confirmed)
        if before != state:
            self.manager.changed(f"rented node {node.name}: {state.state.value} on its provider")

    def _bill(self, node: RentedUpstream, provider: Provider, now: float | None = None) -> None:
        price = provider.price(node).per_hour
        if price is None:
            return  # per token (the meter charges each answer) or unknown (the node is then ineligible if capped)
        billed = self.manager.meter.bill(node.name, since=self._since[node.name], now=now or steady(),
                                         minute_s=self.minute_s, price_per_hour=price)
        self._since[node.name] = billed.start
        self.manager.check_budget(node)

    def _pause_soon(self, node: RentedUpstream, provider: Provider) -> None:
        task = asyncio.ensure_future(self._pause(node, provider, "over its cap"))
        self.manager.track(task)

    async def _pause(self, node: RentedUpstream, provider: Provider, why: str) -> None:
        with guarded(f"pausing rented node {node.name} ({why})", log, self.manager.hooks.tell):
            await provider.pause(node.name)

    async def _budget_reached(self, node: RentedUpstream, reason: str) -> None:
        provider = self.provider(node)
        if provider is not None and node.decl.lifecycle.managed:
            await self._pause(node, provider, reason)

    async def _sponsor_exit(self, node: RentedUpstream) -> None:
        provider = self.provider(node)
        if provider is not None:
            await provider.stop_for_exit(node.name)

    async def _before_detach(self, node: RentedUpstream, force: bool) -> None:
        provider = self.provider(node)
        if provider is None or node.reported is None or not node.reported.billing:
            return
        try:
            await provider.stop_for_exit(node.name)
        except PairwiseError as exc:
            if not force:
                raise RefusedError(f"rented node {node.name} bills and its provider would not pause it "
                                   f"({exc.message}); detach with --yes to forget it anyway") from exc
