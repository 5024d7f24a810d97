"""The cost meter: what rented nodes cost, per workload and per period.

A rented node costs its hourly price for as long as it works for us. Between any two
events (a workload starting or ending on that node) each workload in flight there is
charged ``price_per_hour × elapsed / 3600 / workloads in flight``: concurrent workloads
share the hour rather than each paying for it. A workload's total is its ``cost_usd``.

A lifecycle controller (the Hugging Face adapter) also knows what the provider bills
while nobody is using the node (initializing, idle running minutes); it reports that with
``charge(node, usd)``. For a budget the meter takes, per period, the larger of the two
streams: workloads' shares and billed time (they overlap: billed time includes the
minutes spent serving workloads).

Public API: ``CostMeter(path=None, clock=time.time)``; ``begin(node, job_id, price)``,
``end(job_id) -> float | None``, ``set_price(node, price)``, ``charge(node, usd)``,
``totals(node) -> {"session_usd", "day_usd", "month_usd", "in_flight"}``,
``spent(node, "day"|"month") -> float``. Day and month totals persist in ``path``
(rented_meter.json in the home, written at most once a second and on ``flush()``) so a restart
does not reset a budget.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.home import write_private

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
    def __init__(self, path: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.path, self.clock = path, clock
        self._nodes: dict[str, _Node] = {}
        self._job_node: dict[str, str] = {}
        self._periods: dict[str, dict[str, Any]] = self._load()
        self._flush_handle: asyncio.TimerHandle | None = None

    # -- workloads -------------------------------------------------------------------------------------------

    def begin(self, node: str, job_id: str, price_per_hour: float | None) -> None:
        meter = self._accrue(node)
        meter.price = price_per_hour or 0.0
        meter.active.setdefault(job_id, 0.0)
        self._job_node[job_id] = node

    def end(self, job_id: str) -> float | None:
        """Stop charging a workload; its cost in USD (None if it was not metered here)."""
        node = self._job_node.pop(job_id, None)
        if node is None:
            return None
        meter = self._accrue(node)
        cost = meter.active.pop(job_id, 0.0)
        meter.session_workloads += cost
        self._add(node, "workloads", cost)
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
        if usd <= 0:
            return
        self._nodes.setdefault(node, _Node(last=self.clock())).session_billed += usd
        self._add(node, "billed", usd)

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
        }

    def spent(self, node: str, period: Period) -> float:
        meter = self._nodes.get(node)
        running = sum(meter.active.values()) if meter else 0.0
        row = self._row(node)
        return max(row[f"{period}_workloads"] + running, row[f"{period}_billed"])

    def forget(self, node: str) -> None:
        self._nodes.pop(node, None)
        self._periods.pop(node, None)
        self._save()

    # -- periods ---------------------------------------------------------------------------------------------

    def _keys(self) -> tuple[str, str]:
        now = time.localtime(self.clock())
        return time.strftime("%Y-%m-%d", now), time.strftime("%Y-%m", now)

    def _row(self, node: str) -> dict[str, Any]:
        day, month = self._keys()
        row = self._periods.setdefault(node, {})
        if row.get("day") != day:
            row.update(day=day, day_workloads=0.0, day_billed=0.0)
        if row.get("month") != month:
            row.update(month=month, month_workloads=0.0, month_billed=0.0)
        return row

    def _add(self, node: str, stream: str, usd: float) -> None:
        row = self._row(node)
        row[f"day_{stream}"] += usd
        row[f"month_{stream}"] += usd
        self._save()

    def _load(self) -> dict[str, dict[str, Any]]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            log.warning("rented cost totals unreadable, starting from zero: %s", exc)
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)}

    def _save(self) -> None:
        """Persist soon: at most once per SAVE_EVERY_S on a running loop (an fsync per workload is
        milliseconds on the request path), at once without one. ``flush()`` on stop."""
        if self.path is None:
            return
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
        if self.path is not None:
            write_private(self.path, json.dumps(self._periods, indent=1).encode())
