"""Spend accounts: what each rented endpoint has cost today and this month, shared by every sponsor home.

An account belongs to the *endpoint*, not to a node name: its key is the provider's identity of the
endpoint (``account_key``), so detach and re-attach, a new node name, or a second sponsor home on the
same machine add to one account of it. Days and months are UTC, so a time-zone change between runs
neither resets nor splits a day.

Where it lives: ``spend.json`` in one per-user directory that every home on the machine shares
(``spend_dir()``: ``PAIRWISE_SPEND_DIR``, else the platform's user data dir for ``pairwise-spend``),
read and written under an exclusive file lock (``spend.json.lock``) so two sponsor processes never
lose each other's charges. Every change is a read-modify-write under the lock; billed minutes are
written (fsynced) as they are charged, not later.

Besides the totals, an account keeps its open **billing stretch** as the provider bills it (wall-clock
start, minutes charged, the price they were charged at, when that price was last confirmed). A sponsor
that restarts after being down resumes charging from there (the minutes billed while nobody watched
are charged before anything else is decided), and two sponsors watching one endpoint charge each of
its minutes once.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs
from filelock import FileLock, Timeout

from app.environment import environment
from app.home import write_private
from app.services.rented.timebase import steady

log = logging.getLogger(__name__)
FILE_NAME = "spend.json"
LOCK_WAIT_S = 10.0
SPEND_DIR_ENV = "PAIRWISE_SPEND_DIR"


def spend_dir() -> Path:
    """The directory every sponsor home of this user shares for spend accounts."""
    chosen = environment().text(SPEND_DIR_ENV)
    if chosen:
        return Path(chosen).expanduser().resolve()
    return Path(platformdirs.user_data_dir("pairwise-spend", appauthor=False))


def url_identity(url: str) -> str:
    """An endpoint URL's identity: scheme, host (lower case), port and path; no user info or query."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"url:{parts.scheme}://{host}:{port}{parts.path.rstrip('/')}"


def period_keys(at: float) -> tuple[str, str]:
    """(UTC day, UTC month) of a wall-clock time."""
    utc = time.gmtime(at)
    return time.strftime("%Y-%m-%d", utc), time.strftime("%Y-%m", utc)


@dataclass
class Billed:
    """What one ``bill`` call did: USD added, and the stretch as the account now has it."""
    usd: float
    start: float  # wall clock
    charged: int  # minutes of the stretch charged so far


def _fresh_row() -> dict[str, Any]:
    return {"day": "", "day_workloads": 0.0, "day_billed": 0.0,
            "month": "", "month_workloads": 0.0, "month_billed": 0.0, "stretch": None, "closed_at": None,
            "asked_at": None}


def roll(row: dict[str, Any], at: float) -> dict[str, Any]:
    """The row with its day and month brought to ``at`` (a new UTC day or month starts from zero). Keys
    only move forward: a clock set back across midnight never brings back (and resets) an earlier day."""
    day, month = period_keys(at)
    if day > str(row.get("day") or ""):
        row.update(day=day, day_workloads=0.0, day_billed=0.0)
    if month > str(row.get("month") or ""):
        row.update(month=month, month_workloads=0.0, month_billed=0.0)
    return row


class SpendBook:
    """The shared file of accounts. ``path=None`` keeps them in memory (tests of one process)."""

    def __init__(self, path: Path | None, clock: Callable[[], float] = steady) -> None:
        self.path, self.clock = path, clock
        self._lock = FileLock(str(path) + ".lock", timeout=LOCK_WAIT_S) if path is not None else None
        self._accounts: dict[str, dict[str, Any]] = {}
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file as last read
        self._reload()

    # -- reading ---------------------------------------------------------------------------------------------

    def _stat(self) -> tuple[int, int] | None:
        if self.path is None:
            return None
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _reload(self, *, force: bool = False) -> None:
        """Read the file again if another process (or this one) changed it since the last read."""
        if self.path is None:
            return
        seen = self._stat()
        if not force and seen == self._seen:
            return
        self._seen = seen
        if seen is None:
            self._accounts = {}
            return
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            # Keep what we had: losing the totals would reopen a cap that was reached.
            log.warning("spend accounts in %s unreadable, keeping the last ones read: %s", self.path, exc)
            return
        accounts = data.get("accounts") if isinstance(data, dict) else None
        if isinstance(accounts, dict):
            self._accounts = {k: {**_fresh_row(), **v} for k, v in accounts.items() if isinstance(v, dict)}

    def row(self, account: str) -> dict[str, Any]:
        """A copy of the account's row, rolled to the current UTC day and month."""
        self._reload()
        return roll({**_fresh_row(), **self._accounts.get(account, {})}, self.clock())

    def has(self, account: str) -> bool:
        self._reload()
        return account in self._accounts

    # -- writing ---------------------------------------------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[None]:
        if self._lock is None or self.path is None:
            yield
            return
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # spend is nobody else's business
        try:
            self._lock.acquire()
        except Timeout:
            # Another process holds the lock far too long; charging in memory beats not charging.
            log.warning("spend accounts: %s stayed locked for %g s; this change is written without the lock",
                        self.path, LOCK_WAIT_S)
            yield
            return
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def change(self, account: str) -> Iterator[dict[str, Any]]:
        """Read-modify-write one account under the lock; the file is written (fsynced) on exit."""
        with self._locked():
            self._reload(force=True)
            row = roll(self._accounts.setdefault(account, _fresh_row()), self.clock())
            yield row
            self._write()

    def _write(self) -> None:
        if self.path is None:
            return
        body = {"version": 1, "note": "rented endpoints' spend per UTC day and month (Pairwise)",
                "accounts": self._accounts}
        write_private(self.path, json.dumps(body, indent=1).encode())
        self._seen = self._stat()

    def add(self, deltas: dict[str, dict[str, float]]) -> None:
        """Add USD per account and stream (``{"account": {"workloads": usd, "billed": usd}}``)."""
        if not deltas:
            return
        with self._locked():
            self._reload(force=True)
            now = self.clock()
            for account, streams in deltas.items():
                row = roll(self._accounts.setdefault(account, _fresh_row()), now)
                for stream, usd in streams.items():
                    row[f"day_{stream}"] += usd
                    row[f"month_{stream}"] += usd
            self._write()

    def adopt(self, account: str, legacy: dict[str, Any]) -> None:
        """Take a row from before accounts were shared (per node name, in the home), if none exists yet."""
        with self._locked():
            self._reload(force=True)
            if account in self._accounts:
                return
            row = {**_fresh_row(), **{k: v for k, v in legacy.items() if k in _fresh_row()}}
            self._accounts[account] = roll(row, self.clock())
            self._write()

    # -- the billing stretch -----------------------------------------------------------------------------------

    def stretch(self, account: str) -> dict[str, Any] | None:
        found = self.row(account).get("stretch")
        return dict(found) if isinstance(found, dict) else None

    def bill(self, account: str, *, since: float, now: float, minute_s: float, price_per_hour: float,
             price_seen_at: float | None = None) -> Billed:
        """The provider has billed the endpoint without a break since (at the latest) ``since``, and still
        does at ``now`` (wall clock): charge every started minute not charged yet, at ``price_per_hour``,
        the price the provider was last seen asking at ``price_seen_at`` (default ``now``).

        The stretch is the account's, shared: one already open is joined (its start kept, or moved
        earlier), so two sponsors charge each minute once. A price higher than the one charged so far
        is also owed for the minutes started since the old price was last seen (when the change
        happened in between is not known, so the meter assumes the earliest)."""
        seen = now if price_seen_at is None else price_seen_at
        with self.change(account) as row:
            s = row.get("stretch")
            if not isinstance(s, dict):
                closed = row.get("closed_at")
                start = max(since, closed) if isinstance(closed, int | float) else since
                s = {"start": min(start, now), "charged": 0, "price": price_per_hour, "price_at": seen}
                row["asked_at"] = None  # the ask is answered: the stretch now says when billing began
            else:
                s["start"] = min(float(s["start"]), since)
            usd = 0.0
            charged, old_price = int(s["charged"]), float(s["price"])
            if price_per_hour > old_price and charged:
                confirmed = max(0, math.floor((float(s["price_at"]) - s["start"]) / minute_s) + 1)
                usd += max(0, charged - confirmed) * (price_per_hour - old_price) / 60.0
            started = math.floor(max(0.0, now - s["start"]) / minute_s) + 1
            new = max(0, started - charged)
            usd += new * price_per_hour / 60.0
            price_at = max(seen, float(s["price_at"])) if price_per_hour == old_price else seen
            s.update(charged=max(charged, started), price=price_per_hour, price_at=price_at, seen_billing=now)
            row["stretch"] = s
            row["day_billed"] += usd
            row["month_billed"] += usd
            return Billed(usd, float(s["start"]), int(s["charged"]))

    def asked(self, account: str, at: float | None) -> None:
        """A sponsor asked the provider to start billing at ``at`` (create, resume, wake), or withdrew
        the ask (``None``: it paused). Written before the provider answers: a sponsor that dies before
        it sees the endpoint billing still knows, at its next start, the earliest moment billing began."""
        with self.change(account) as row:
            row["asked_at"] = at

    def open_ask(self, account: str) -> float | None:
        """When billing may have begun unseen: the ask not yet answered by a billed stretch, no earlier
        than the last moment the endpoint was seen not billing."""
        row = self.row(account)
        asked = row.get("asked_at")
        if not isinstance(asked, int | float) or isinstance(row.get("stretch"), dict):
            return None
        closed = row.get("closed_at")
        return max(float(asked), float(closed)) if isinstance(closed, int | float) else float(asked)

    def unbilled(self, account: str, at: float) -> None:
        """The provider was seen not billing at ``at``: the stretch is over (unless someone saw it billing
        later than that: then this observation is the stale one)."""
        self._reload()
        current = self._accounts.get(account)
        if current is not None and current.get("stretch") is None and current.get("closed_at") is not None:
            return  # already closed: nothing to write
        with self.change(account) as row:
            s = row.get("stretch")
            if isinstance(s, dict) and float(s.get("seen_billing", 0.0)) > at:
                return
            row["stretch"] = None
            closed = row.get("closed_at")
            row["closed_at"] = max(at, closed) if isinstance(closed, int | float) else at
