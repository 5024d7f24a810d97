"""The cost meter: what rented nodes cost, per workload and per period.

A rented node costs its hourly price for as long as it works for us. Between any two
events (a workload starting or ending on that node) each workload in flight there is
charged ``price_per_hour × elapsed / 3600 / workloads in flight``: concurrent workloads
share the hour rather than each paying for it. A workload's total is its ``cost_usd``.

A lifecycle controller (a provider's, or the provider loop) also knows what the provider bills
while nobody is using the node (initializing, idle running minutes); it reports that with
``bill(node, ...)`` (billed minutes of the endpoint's billing stretch, see spend.py) or
``charge(node, usd)``. For a budget the meter takes, per period, the larger of the two
streams: workloads' shares and billed time (they overlap: billed time includes the
minutes spent serving workloads).

Day and month totals belong to the endpoint's **spend account** (spend.py), not to the node
name: ``bind(node, account)`` says which account a node's spend goes to (a node never bound
uses its own name). Days and months are UTC. Time is ``timebase.steady`` (wall-clock seconds that
cannot jump while the node runs), so a clock set forward or back neither charges nor forgets.

Public API: ``CostMeter(path=None, clock=steady, legacy=None)``; ``bind(node, account)``,
``account(node)``; ``begin(node, job_id, price)``, ``end(job_id) -> float | None``,
``set_price(node, price)``, ``charge(node, usd)``, ``bill(node, since=, now=, minute_s=,
price_per_hour=, price_seen_at=) -> Billed``, ``unbilled(node, at)``, ``stretch(node)``,
``totals(node) -> {"session_usd", "day_usd", "month_usd", "in_flight", "price_per_hour", "account"}``,
``spent(node, "day"|"month") -> float``, ``forget(node)`` (the session only: the account stays).
Workload shares are written at most once a second and on ``flush()``; billed minutes at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.home import write_private
from app.services.rented.spend import Billed, SpendBook
from app.services.rented.timebase import steady

log = logging.getLogger(__name__)
Period = Literal["day", "month"]
SAVE_EVERY_S = 1.0


@dataclass
class _Node:
    price: float = 0.0
    last: float = 0.0
    active: dict[str, float] = field(default_factory=dict)  # job id -> USD accrued so far
    session_workloads: float = 0.0
    session_billed: float = 0.0


class CostMeter:
    def __init__(self, path: Path | None = None, clock: Callable[[], float] = steady, *,
                 legacy: Path | None = None, marker: Path | None = None) -> None:
        """``path``: the shared spend database (spend.py); ``legacy``: a home's old per-name totals
        (rented_meter.json), taken into an account the first time its node is bound to one; ``marker``:
        the home's memory that the account existed (a deleted one is then not taken for a first start)."""
        self.clock = clock
        self.book = SpendBook(path, clock, marker=marker)
        self._nodes: dict[str, _Node] = {}
        self._job_node: dict[str, str] = {}
        self._accounts: dict[str, str] = {}  # node name -> account key
        self._pending: dict[str, dict[str, float]] = {}  # workload shares not written yet
        self._legacy_path = legacy
        self._legacy = self._load_legacy(legacy)
        self._flush_handle: asyncio.TimerHandle | None = None

    # -- accounts --------------------------------------------------------------------------------------------

    def bind(self, node: str, account: str) -> None:
        """Charge ``node`` to ``account`` (the endpoint's identity) from now on."""
        self.flush()
        self._accounts[node] = account
        old = self._legacy.pop(node, None)
        if old is not None:
            self.book.adopt(account, old)
            self._save_legacy()

    def account(self, node: str) -> str:
        return self._accounts.get(node, node)

    @property
    def problem(self) -> str | None:
        """Why the spend account cannot be trusted (naming its file), or None: looked at afresh."""
        return self.book.check()

    # -- workloads -------------------------------------------------------------------------------------------

    def begin(self, node: str, job_id: str, price_per_hour: float | None) -> None:
        meter = self._accrue(node)
        meter.price = max(meter.price, price_per_hour or 0.0)
        meter.active.setdefault(job_id, 0.0)
        self._job_node[job_id] = node

    def end(self, job_id: str, usd: float | None = None) -> float | None:
        """Stop charging a workload; its cost in USD (None if it was not metered here). ``usd``: what it
        cost when that is known otherwise (a per-token node: its tokens times their prices)."""
        node = self._job_node.pop(job_id, None)
        if node is None:
            return None
        meter = self._accrue(node)
        cost = meter.active.pop(job_id, 0.0)
        if usd is not None:
            cost = max(cost, usd)
        meter.session_workloads += cost
        stream = self._pending.setdefault(self.account(node), {})
        stream["workloads"] = stream.get("workloads", 0.0) + cost
        self._save()
        return cost

    def set_price(self, node: str, price_per_hour: float | None) -> None:
        self._accrue(node).price = price_per_hour or 0.0

    def _accrue(self, node: str) -> _Node:
        now = self.clock()
        meter = self._nodes.setdefault(node, _Node(last=now))
        if meter.active and meter.price and now > meter.last:
            share = meter.price * (now - meter.last) / 3600.0 / len(meter.active)
            for job_id in meter.active:
                meter.active[job_id] += share
        meter.last = now
        return meter

    # -- billed time (reported by a lifecycle controller) ----------------------------------------------------

    def charge(self, node: str, usd: float) -> None:
        """Billed USD the controller counted itself; written at once."""
        if usd <= 0:
            return
        self._nodes.setdefault(node, _Node(last=self.clock())).session_billed += usd
        self.book.add({self.account(node): {"billed": usd}})

    def bill(self, node: str, *, since: float, now: float, minute_s: float, price_per_hour: float,
             price_seen_at: float | None = None) -> Billed:
        """Billed minutes of the endpoint's stretch, shared through its account (see SpendBook.bill)."""
        billed = self.book.bill(self.account(node), since=since, now=now, minute_s=minute_s,
                                price_per_hour=price_per_hour, price_seen_at=price_seen_at)
        if billed.usd > 0:
            self._nodes.setdefault(node, _Node(last=self.clock())).session_billed += billed.usd
        return billed

    def unbilled(self, node: str, at: float) -> None:
        self.book.unbilled(self.account(node), at)

    def asked(self, account: str, at: float | None) -> None:
        """A sponsor asked the provider of ``account`` to bill from ``at`` (None: the ask is withdrawn)."""
        self.book.asked(account, at)

    def open_ask(self, node: str) -> float | None:
        """The earliest wall-clock moment an unanswered ask may have started billing (see SpendBook.open_ask)."""
        return self.book.open_ask(self.account(node))

    def stretch(self, node: str) -> dict[str, Any] | None:
        """The account's open billing stretch (wall-clock ``start``, minutes ``charged``...), or None."""
        return self.book.stretch(self.account(node))

    # -- totals ----------------------------------------------------------------------------------------------

    def totals(self, node: str) -> dict[str, Any]:
        meter = self._accrue(node)
        running = sum(meter.active.values())
        return {
            "session_usd": max(meter.session_workloads + running, meter.session_billed),
            "day_usd": self.spent(node, "day"),
            "month_usd": self.spent(node, "month"),
            "in_flight": len(meter.active),
            "price_per_hour": meter.price or None,
            "account": self.account(node),
            "problem": self.problem,
        }

    def spent(self, node: str, period: Period) -> float:
        meter = self._nodes.get(node)
        running = sum(meter.active.values()) if meter else 0.0
        account = self.account(node)
        row = self.book.row(account)
        pending = self._pending.get(account, {}).get("workloads", 0.0)
        return max(row[f"{period}_workloads"] + pending + running, row[f"{period}_billed"])

    def forget(self, node: str) -> None:
        """The node is gone from this sponsor; its account (the endpoint's spend) stays."""
        self.flush()
        self._nodes.pop(node, None)
        self._accounts.pop(node, None)

    # -- persistence -----------------------------------------------------------------------------------------

    def _load_legacy(self, path: Path | None) -> dict[str, dict[str, Any]]:
        if path is None or not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("old rented cost totals %s unreadable: %s", path, exc)
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}

    def _save_legacy(self) -> None:
        if self._legacy_path is None:
            return
        if self._legacy:
            write_private(self._legacy_path, json.dumps(self._legacy).encode())
        else:
            self._legacy_path.unlink(missing_ok=True)

    def _save(self) -> None:
        """Write workload shares soon: at most once per SAVE_EVERY_S on a running loop (an fsync per
        workload is milliseconds on the request path), at once without one. ``flush()`` on stop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        if self._flush_handle is None:
            self._flush_handle = loop.call_later(SAVE_EVERY_S, self.flush)

    def flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        pending, self._pending = self._pending, {}
        self.book.add(pending)
