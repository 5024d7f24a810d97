"""Spend accounts: what each rented endpoint has cost today and this month, shared by every sponsor home.

An account belongs to the *endpoint*, not to a node name: its key is the provider's identity of the
endpoint (``account_key``), so detach and re-attach, a new node name, or a second sponsor home on the
same machine add to one account of it. Days and months are UTC, so a time-zone change between runs
neither resets nor splits a day; a day key only moves forward (a clock set back never reopens a day).

Where it lives: ``spend.db``, a SQLite database in one per-user directory that every home on the
machine shares (``spend_dir()``: ``PAIRWISE_SPEND_DIR``, else the platform's user data dir for
``pairwise-spend``). WAL journal, synchronous FULL, one ``BEGIN IMMEDIATE`` transaction per change, so
two sponsor processes never lose each other's charges (SQLite's own locking, the same on all three
platforms). A ``spend.json`` from before is migrated once (kept as ``spend.json.migrated``).

**A damaged account never reads as zero.** At open the file is checked (``PRAGMA quick_check``, its
header, its schema); while running every look checks it is still the file opened, not shrunk, not
emptied, still writable. A missing (once it existed: the home's ``spend_account.json`` remembers it),
unreadable, damaged or unwritable account sets ``problem`` (naming the file); from then on the book
keeps counting in memory on the last figures it read, writes nothing, and the manager keeps every
rented node ineligible and every managed endpoint paused until ``repair`` (``pairwise spend repair``)
starts a new account from figures it is given, moving the damaged file aside.

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
import os
import sqlite3
import stat
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import urlsplit

import platformdirs

from app.environment import environment
from app.home import write_private
from app.services.errors import ConfigError
from app.services.rented.timebase import steady

log = logging.getLogger(__name__)
FILE_NAME = "spend.db"
LEGACY_FILE = "spend.json"
LOCK_WAIT_S = 10.0
SPEND_DIR_ENV = "PAIRWISE_SPEND_DIR"
SCHEMA = 1
HEADER = b"SQLite format 3\x00"
ACCOUNT_PREFIX = "spend not counted: "  # a rented node's reason while its account cannot be trusted
REPAIR_HINT = ("run 'pairwise spend repair' to start a new account from what this sponsor's job records and "
               "last figures show, or 'pairwise spend repair --accept-usd X' to state today's spend yourself")
class SpendRepair(TypedDict):
    """What ``pairwise spend repair`` did: the account file, where the damaged one went, the figures."""

    file: str
    moved_to: str | None
    problem: str | None
    accounts: dict[str, float]  # account -> USD taken as today's spend
    accepted: bool  # the figures were stated by the user (--accept-usd), not rebuilt


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


class AccountUnusable(ConfigError):
    """The account file cannot be trusted (missing, replaced, truncated, damaged, unwritable)."""

    title = "Spend account unusable"


class SpendBook:
    """The shared database of accounts. ``path=None`` keeps them in memory (tests of one process);
    ``marker``: a file in the sponsor's home remembering that this account existed (so a deleted one is
    told apart from a first start)."""

    def __init__(self, path: Path | None, clock: Callable[[], float] = steady, *, marker: Path | None = None) -> None:
        self.path, self.clock, self.marker = path, clock, marker
        self.problem: str | None = None
        self._db: sqlite3.Connection | None = None
        self._ident: tuple[int, int] | None = None  # (device, inode) of the file opened
        # The file's header is read through one descriptor kept as long as the database is open: closing
        # any descriptor of the file drops every POSIX lock this process holds on it (SQLite's too), and
        # another sponsor's node then takes this one's connection for the last, checkpoints and deletes
        # the write-ahead log under it (its next charges lost, the file damaged for every reader).
        self._header_fd: int | None = None
        self._size = 0  # the largest size seen: a SQLite file never shrinks (Pairwise never vacuums)
        self._cache: dict[str, dict[str, Any]] = {}  # the last rows read or written: what a damaged account keeps
        self._open()

    # -- opening and checking ----------------------------------------------------------------------------------

    def _open(self) -> None:
        if self.path is None:
            self._db = self._connect(":memory:")
            self._schema()
            return
        try:
            remembered = self._remembered()
            if not self.path.exists():
                if remembered is not None:
                    raise AccountUnusable("is missing (it held the spend accounts: deleted or moved?)")
                self._create()
            else:
                self._check_file(first=True)
                self._db = self._connect(str(self.path))
                found = self._db.execute("PRAGMA quick_check").fetchone()
                if not found or found[0] != "ok":
                    raise AccountUnusable(f"is damaged (integrity check: {found[0] if found else 'no answer'})")
                ident = self._meta("id")
                if ident is None:
                    raise AccountUnusable("holds no spend accounts (not Pairwise's account, or emptied)")
                if remembered is not None and remembered != ident:
                    raise AccountUnusable("was replaced by another account (the one this home counted on is gone)")
                self._remember(ident)
            self._load_all()
        except (AccountUnusable, sqlite3.Error, OSError) as exc:
            self._fail(exc)

    @staticmethod
    def _connect(where: str) -> sqlite3.Connection:
        db = sqlite3.connect(where, timeout=LOCK_WAIT_S, isolation_level=None, check_same_thread=False)
        if where != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a charge that was told is on disk
        return db

    def _schema(self) -> None:
        assert self._db is not None
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS accounts (account TEXT PRIMARY KEY, row TEXT NOT NULL)")
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('id', ?)", (uuid.uuid4().hex,))

    def _create(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # spend is nobody else's business
        self._db = self._connect(str(self.path))
        os.chmod(self.path, 0o600)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._schema()
            self._migrate()
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        ident = self._meta("id")
        assert ident is not None
        self._remember(ident)
        self._check_file(first=True)

    def _migrate(self) -> None:
        """Take in a ``spend.json`` from before (inside the creating transaction)."""
        assert self.path is not None and self._db is not None
        legacy = self.path.with_name(LEGACY_FILE)
        if not legacy.exists():
            return
        try:
            data = json.loads(legacy.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise AccountUnusable(f"could not be made from {legacy}, which is unreadable ({exc})") from exc
        accounts = data.get("accounts") if isinstance(data, dict) else None
        for account, row in (accounts or {}).items():
            if isinstance(row, dict):
                self._db.execute("INSERT OR REPLACE INTO accounts VALUES (?, ?)",
                                 (account, json.dumps({**_fresh_row(), **row})))
        legacy.rename(legacy.with_name(LEGACY_FILE + ".migrated"))
        log.info("spend accounts: %s migrated into %s", legacy, self.path)

    def _meta(self, key: str) -> str | None:
        assert self._db is not None
        try:
            found = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None  # no meta table
        return str(found[0]) if found else None

    def _remembered(self) -> str | None:
        if self.marker is None or not self.marker.exists():
            return None
        try:
            data = json.loads(self.marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("path") != str(self.path):
            return None
        return str(data.get("id")) if data.get("id") else None

    def _remember(self, ident: str) -> None:
        if self.marker is not None and self._remembered() != ident:
            write_private(self.marker, json.dumps({"path": str(self.path), "id": ident}).encode())

    def _check_file(self, *, first: bool = False) -> None:
        """Raise AccountUnusable unless the file is still the one opened, whole and writable."""
        assert self.path is not None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise AccountUnusable("was deleted while Pairwise ran") from None
        ident = (st.st_dev, st.st_ino)
        if first or self._ident is None:
            self._ident = ident
        elif ident != self._ident:
            raise AccountUnusable("was replaced while Pairwise ran")
        if st.st_size == 0:
            raise AccountUnusable("is empty (truncated)")
        if st.st_size < self._size:
            raise AccountUnusable(f"was truncated ({st.st_size} bytes, was {self._size})")
        self._size = max(self._size, st.st_size)
        if self._header_fd is None:
            self._header_fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        os.lseek(self._header_fd, 0, os.SEEK_SET)
        if os.read(self._header_fd, len(HEADER)) != HEADER:
            raise AccountUnusable("is damaged (not a SQLite database any more)")
        if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise AccountUnusable("cannot be written (read-only)")

    def _fail(self, exc: BaseException) -> None:
        what = str(exc) if isinstance(exc, AccountUnusable) else f"cannot be used ({type(exc).__name__}: {exc})"
        if self.problem is None:
            self.problem = f"the spend account {self.path} {what}"
            log.error("%s; rented nodes stay ineligible and managed endpoints paused; %s", self.problem, REPAIR_HINT)
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        self._let_go_of_header()

    def _let_go_of_header(self) -> None:
        """After the database's own connection is closed (see ``_header_fd``)."""
        if self._header_fd is not None:
            os.close(self._header_fd)
            self._header_fd = None

    def check(self) -> str | None:
        """Look at the file again; the problem, if it cannot be trusted."""
        if self.problem is None and self.path is not None:
            try:
                self._check_file()
            except (AccountUnusable, OSError) as exc:
                self._fail(exc)
        return self.problem

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._let_go_of_header()

    # -- reading ---------------------------------------------------------------------------------------------

    def _usable(self) -> sqlite3.Connection | None:
        if self.check() is not None:
            return None
        return self._db

    def _load_all(self) -> None:
        db = self._usable()
        if db is None:
            return
        for account, raw in db.execute("SELECT account, row FROM accounts").fetchall():
            self._cache[account] = {**_fresh_row(), **json.loads(raw)}

    def _read(self, account: str) -> dict[str, Any]:
        """The stored row (no roll), falling back on the last one read when the account is unusable."""
        db = self._usable()
        if db is not None:
            try:
                found = db.execute("SELECT row FROM accounts WHERE account = ?", (account,)).fetchone()
            except (sqlite3.Error, ValueError) as exc:
                self._fail(exc)
            else:
                if found is not None:
                    self._cache[account] = {**_fresh_row(), **json.loads(found[0])}
                return dict(self._cache.get(account) or _fresh_row())
        return dict(self._cache.get(account) or _fresh_row())

    def row(self, account: str) -> dict[str, Any]:
        """A copy of the account's row, rolled to the current UTC day and month."""
        return roll(self._read(account), self.clock())

    def has(self, account: str) -> bool:
        db = self._usable()
        if db is not None:
            try:
                return db.execute("SELECT 1 FROM accounts WHERE account = ?", (account,)).fetchone() is not None
            except sqlite3.Error as exc:
                self._fail(exc)
        return account in self._cache

    def accounts(self) -> dict[str, dict[str, Any]]:
        """Every account's row as last read (rolled): what a repair may start from."""
        self._load_all()
        return {k: roll(dict(v), self.clock()) for k, v in self._cache.items()}

    # -- writing ---------------------------------------------------------------------------------------------

    @contextmanager
    def change(self, account: str) -> Iterator[dict[str, Any]]:
        """One transaction on one account: read, let the caller change the row, write. While the account
        is unusable the change is kept in memory only (counted, never lost from view, never written)."""
        db = self._usable()
        if db is None:
            row = roll(dict(self._cache.get(account) or _fresh_row()), self.clock())
            yield row
            self._cache[account] = row
            return
        try:
            db.execute("BEGIN IMMEDIATE")
            found = db.execute("SELECT row FROM accounts WHERE account = ?", (account,)).fetchone()
        except sqlite3.Error as exc:
            self._rollback(db)
            self._fail(exc)
            row = roll(dict(self._cache.get(account) or _fresh_row()), self.clock())
            yield row
            self._cache[account] = row
            return
        row = roll({**_fresh_row(), **json.loads(found[0])} if found else _fresh_row(), self.clock())
        try:
            yield row
        except BaseException:
            self._rollback(db)
            raise
        self._cache[account] = row
        try:
            db.execute("INSERT OR REPLACE INTO accounts VALUES (?, ?)", (account, json.dumps(row)))
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(db)
            self._fail(exc)
            return
        self.check()  # a file changed under us (deleted, truncated) is noticed at the charge that met it

    @staticmethod
    def _rollback(db: sqlite3.Connection) -> None:
        try:
            if db.in_transaction:
                db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def add(self, deltas: dict[str, dict[str, float]]) -> None:
        """Add USD per account and stream (``{"account": {"workloads": usd, "billed": usd}}``), one
        transaction per account."""
        for account, streams in deltas.items():
            with self.change(account) as row:
                for stream, usd in streams.items():
                    row[f"day_{stream}"] += usd
                    row[f"month_{stream}"] += usd

    def adopt(self, account: str, legacy: dict[str, Any]) -> None:
        """Take a row from before accounts were shared (per node name, in the home), if none exists yet."""
        if self.has(account):
            return
        with self.change(account) as row:
            row.update({k: v for k, v in legacy.items() if k in _fresh_row()})
            row.update(roll(row, self.clock()))

    def repair(self, figures: dict[str, float]) -> Path | None:
        """Start a new account from ``figures`` (USD spent today, per account, taken as this month's too
        unless the last figures read say more), moving the damaged file aside; the moved file's path."""
        moved: Path | None = None
        self.close()
        if self.path is not None and (self.path.exists() or self.path.is_symlink()):
            moved = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
            self.path.replace(moved)
            for suffix in ("-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
        last = {k: roll(dict(v), self.clock()) for k, v in self._cache.items()}
        self.problem, self._ident, self._size, self._cache = None, None, 0, {}
        if self.path is None:
            self._db = self._connect(":memory:")
            self._schema()
        else:
            if self.marker is not None:
                self.marker.unlink(missing_ok=True)
            try:
                self._create()
            except (AccountUnusable, sqlite3.Error, OSError) as exc:
                self._fail(exc)
                raise
        for account, usd in figures.items():
            before = last.get(account, _fresh_row())
            with self.change(account) as row:
                row["day_billed"] = usd
                row["month_billed"] = max(usd, float(before.get("month_billed") or 0.0),
                                          float(before.get("month_workloads") or 0.0))
        return moved

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
        current = self._read(account)
        if current.get("stretch") is None and current.get("closed_at") is not None:
            return  # already closed: nothing to write
        with self.change(account) as row:
            s = row.get("stretch")
            if isinstance(s, dict) and float(s.get("seen_billing", 0.0)) > at:
                return
            row["stretch"] = None
            closed = row.get("closed_at")
            row["closed_at"] = max(at, closed) if isinstance(closed, int | float) else at
