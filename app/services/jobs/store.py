"""Workload history in SQLite, in the node's home.

Changes are written in one transaction at most FLUSH_DELAY_S after they are made
(write-behind: no commit sits on the way to a caller's first byte, and the three
changes of one request become one row write; measured in bench/README.md), in WAL
mode with synchronous=NORMAL, which is durable across a process kill. A node killed
with SIGKILL keeps its history; at most the last FLUSH_DELAY_S of changes are lost.
Every read writes pending changes first. Records from peers are upserted by id and only when
newer, so replicated events arriving twice or out of order are harmless; a record never changes
its origin node (a peer cannot take over a job id another node started).

A write the disk refuses (full, read-only, no permission) loses nothing: the records stay in memory
(up to MAX_PENDING, oldest finished ones given up first, and counted) and the write is tried again
every RETRY_S; ``on_trouble`` is called once when history stops being saved, with why, and once
(with None) when it is saved again. Reads show those records too.

Damage is found at start when it is cheap to look: the page-level check (``quick_check``) reads the
whole file, about 45 µs a record (57 s for a million, bench/README.md), so it runs at start only
after an unclean stop (a ``-wal`` file left behind) or while the file is at most
CHECK_AT_START_BYTES. A larger history that was closed cleanly is checked in a background thread
instead; damage found there stops writes into the damaged file (records are kept in memory as for
a full disk) and is told through ``on_trouble`` with the command that sets the file aside.

Jobs that are open (queued or running) are also kept in memory by id, so the request way
(the peer relay above all) reads no SQLite per request: ``open_job`` and ``get`` of an open
job answer from that map.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from app.home import is_storage_trouble
from app.services.errors import ConfigError
from app.services.jobs.records import ACTIVE_STATES, Workload

log = logging.getLogger(__name__)

CHARGED = "json_extract(record, '$.cost_usd') > 0"  # the partial index workloads_charged

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workloads (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    state TEXT NOT NULL,
    updated_at REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS workloads_created ON workloads(created_at);
CREATE INDEX IF NOT EXISTS workloads_state ON workloads(state);
-- The spend rebuilt at start (charged_since) reads only the records that carry a cost: with a long
-- history, scanning every job of the last days for them was most of the start-up (bench.growth).
-- The query's WHERE must stay the index's, word for word, for SQLite to use it.
CREATE INDEX IF NOT EXISTS workloads_charged ON workloads(created_at) WHERE json_extract(record, '$.cost_usd') > 0;
"""


_UPSERT = (
    "INSERT INTO workloads(id, created_at, state, updated_at, record) VALUES (?,?,?,?,?) "
    "ON CONFLICT(id) DO UPDATE SET state=excluded.state, updated_at=excluded.updated_at, "
    "record=excluded.record WHERE excluded.updated_at >= workloads.updated_at "
    "AND json_extract(excluded.record, '$.origin_node_id') IS json_extract(workloads.record, '$.origin_node_id')"
)


FLUSH_DELAY_S = 0.05
RETRY_S = 1.0
MAX_PENDING = 20_000


SET_ASIDE_COMMAND = "pairwise database set-aside"


class DatabaseDamaged(ConfigError):
    title = "Database damaged"


class DatabaseUnwritable(ConfigError):
    """The job database cannot be written (a read-only home, a full disk): nothing is damaged."""

    title = "Database cannot be written"


def storage_reason(exc: BaseException, path: Path | None = None) -> str:
    """SQLite's words for a refused write, as a person says them (its "unable to open" is made
    precise by looking at the file system ``path`` is on)."""
    if path is not None:
        with contextlib.suppress(OSError):
            if sys.platform != "win32" and os.statvfs(path.parent).f_flag & os.ST_RDONLY:
                return "the file system is read-only"
            if not os.access(path.parent, os.W_OK):
                return "permission denied"
    text = str(exc).lower()
    if "full" in text:
        return "the disk is full"
    if "readonly" in text or "read-only" in text:
        return "the file system is read-only"
    if "permission" in text or isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc)


def set_aside(path: Path) -> Path:
    """Move a damaged database (and its -wal/-shm) aside, keeping it; returns where it went.
    The node then starts with a fresh, empty job history."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.replace(target.with_name(target.name + suffix))
    return target


CHECK_AT_START_BYTES = 64 * 1024 * 1024


def _damage(db: sqlite3.Connection) -> str | None:
    """What the page-level check finds wrong with an open database, None when it is whole."""
    problem = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    return None if problem == "ok" else str(problem)


class JobStore:
    def __init__(self, path: Path, check_at_start_bytes: int = CHECK_AT_START_BYTES) -> None:
        self.path = path
        # SQLite removes the -wal file when the last connection closes cleanly.
        unclean_stop = path.with_name(path.name + "-wal").exists()
        check_now = unclean_stop or not path.exists() or path.stat().st_size <= check_at_start_bytes
        try:
            if not path.exists():
                # Owner-only from the start (SQLite gives its -wal and -shm files the same mode).
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise DatabaseUnwritable(f"the job database {path} cannot be created ({storage_reason(exc)}); "
                                     "free space or make the home writable, then start again") from exc
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            # A page-level check at start: damage found now is one clear line, not a traceback later.
            problem = _damage(self._db) if check_now else None
            if problem is not None:
                raise sqlite3.DatabaseError(problem)
        except sqlite3.DatabaseError as exc:
            if is_storage_trouble(exc):
                raise DatabaseUnwritable(
                    f"the job database {path} cannot be written ({storage_reason(exc, path)}); nothing in it is "
                    "lost: free space or make the home writable, then start again") from exc
            raise DatabaseDamaged(
                f"the job database {path} is damaged ({exc}); move it aside (it is kept) and start a fresh "
                f"one with: {SET_ASIDE_COMMAND}") from exc
        self._lock = threading.Lock()
        # Write-behind: changes made while serving a request are written together right after
        # the current loop step (never on the way to the caller's first byte). Any read
        # writes them first, so readers in this process always see them.
        self._pending: dict[str, Workload] = {}
        self._flush_scheduled = False
        self._open: dict[str, Workload] = {}  # queued or running jobs of this process, by id
        self.trouble: str | None = None  # why history is not being saved now
        self.given_up = 0  # records dropped over MAX_PENDING while the disk refused them
        self.on_trouble: Callable[[str | None], None] | None = None
        self._retry: asyncio.TimerHandle | None = None
        self.damage: str | None = None  # set when the background check finds the file damaged
        self.checked = threading.Event()  # the page-level check has run (at start or in the background)
        if check_now:
            self.checked.set()
        else:
            threading.Thread(target=self._check_in_background, args=(self._running_loop(),),
                             name="jobs-check", daemon=True).start()

    @staticmethod
    def _running_loop() -> asyncio.AbstractEventLoop | None:
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            return None

    def _check_in_background(self, loop: asyncio.AbstractEventLoop | None) -> None:
        try:
            with contextlib.closing(sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                problem = _damage(db)
        except sqlite3.DatabaseError as exc:
            problem = None if is_storage_trouble(exc) else str(exc)
        if problem is not None:
            self.damage = (f"the job database {self.path} is damaged ({problem}); new records are kept in memory "
                           f"until it is set aside: stop the node, then run {SET_ASIDE_COMMAND}")
            if loop is not None and not loop.is_closed():
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the next write tells it
                    loop.call_soon_threadsafe(self.flush)
        self.checked.set()

    def open_job(self, job_id: str) -> Workload | None:
        """An open job by id, from memory (None if it is not open here)."""
        return self._open.get(job_id)

    def save(self, job: Workload) -> None:
        job.updated_at = time.time()
        if job.state in ACTIVE_STATES:
            self._open[job.id] = job
        else:
            self._open.pop(job.id, None)
        self._pending[job.id] = job
        if self._flush_scheduled:
            return
        try:
            asyncio.get_running_loop().call_later(FLUSH_DELAY_S, self.flush)
        except RuntimeError:  # no loop (CLI, tests): write now
            self.flush()
            return
        self._flush_scheduled = True

    def flush(self) -> None:
        self._flush_scheduled = False
        if self.damage is not None:
            # Never written into a damaged file: kept in memory like records a full disk refuses.
            self._bound_pending()
            self._refused(self.damage)
            return
        if not self._pending:
            return
        jobs, self._pending = list(self._pending.values()), {}
        rows = [(j.id, j.created_at, j.state, j.updated_at, json.dumps(j.to_json())) for j in jobs]
        try:
            with self._lock:
                self._db.execute("BEGIN")
                try:
                    self._db.executemany(_UPSERT, rows)
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:  # a failed COMMIT has rolled back already
                        self._db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            if not is_storage_trouble(exc):
                raise
            # Kept, newest versions winning, and tried again: nothing recorded is dropped for a full disk.
            self._pending = {**{j.id: j for j in jobs}, **self._pending}
            self._bound_pending()
            self._refused(storage_reason(exc, self.path))
            return
        if self.trouble is not None:
            self.trouble = None
            if self.on_trouble is not None:
                self.on_trouble(None)

    def _bound_pending(self) -> None:
        over = len(self._pending) - MAX_PENDING
        if over <= 0:
            return
        finished = sorted((j for j in self._pending.values() if j.state not in ACTIVE_STATES),
                          key=lambda j: j.updated_at)
        for job in finished[:over]:
            del self._pending[job.id]
        self.given_up += min(over, len(finished))

    def _refused(self, why: str) -> None:
        first = self.trouble is None
        self.trouble = why
        if first and self.on_trouble is not None:
            self.on_trouble(why)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (CLI): the next write or read tries again
        if self._retry is None:
            self._retry = loop.call_later(RETRY_S, self._retry_flush)

    def _retry_flush(self) -> None:
        self._retry = None
        self.flush()

    @property
    def unsaved(self) -> int:
        """Records waiting for the disk (0 when history is being saved)."""
        return len(self._pending) if self.trouble is not None else 0

    def upsert(self, job: Workload) -> bool:
        """Insert or replace when this version is at least as new. Returns True if stored (or, while
        the disk refuses writes, kept to be written with the same rule when it can)."""
        self.flush()
        if self.trouble is not None:
            kept = self._pending.get(job.id)
            if kept is not None and (kept.updated_at > job.updated_at or kept.origin_node_id != job.origin_node_id):
                return False
            self._pending[job.id] = job
            self._bound_pending()
            return True
        try:
            with self._lock:
                cur = self._db.execute(
                    _UPSERT, (job.id, job.created_at, job.state, job.updated_at, json.dumps(job.to_json())),
                )
                stored = cur.rowcount > 0
        except sqlite3.Error as exc:
            if not is_storage_trouble(exc):
                raise
            self._pending[job.id] = job
            self._refused(storage_reason(exc, self.path))
            return True
        if stored:  # the newest version is the one reads get
            if job.state in ACTIVE_STATES:
                self._open[job.id] = job
            else:
                self._open.pop(job.id, None)
        return stored

    def get(self, job_id: str) -> Workload | None:
        live = self._open.get(job_id) or self._pending.get(job_id)
        if live is not None:
            return live
        self.flush()
        with self._lock:
            row = self._db.execute("SELECT record FROM workloads WHERE id=?", (job_id,)).fetchone()
        return Workload.from_json(json.loads(row[0])) if row else None

    def list(self, *, active_only: bool = False, limit: int = 100) -> list[Workload]:
        self.flush()
        sql = "SELECT record FROM workloads"
        args: tuple[object, ...] = ()
        if active_only:
            sql += f" WHERE state IN ({','.join('?' * len(ACTIVE_STATES))})"
            args = ACTIVE_STATES
        sql += " ORDER BY created_at DESC LIMIT ?"
        with self._lock:
            rows = self._db.execute(sql, (*args, limit)).fetchall()
        found = [Workload.from_json(json.loads(r[0])) for r in rows]
        if not self._pending:
            return found
        # Records the disk has refused so far are history too.
        waiting = {j.id: j for j in self._pending.values() if not active_only or j.state in ACTIVE_STATES}
        merged = [j for j in found if j.id not in waiting] + list(waiting.values())
        merged.sort(key=lambda j: j.created_at, reverse=True)
        return merged[:limit]

    def charged_since(self, at: float) -> builtins.list[Workload]:
        """Every record created since ``at`` that carries a cost, oldest first, without a limit: a
        peer's records (dated by its clock, however far ahead) cannot push this node's out of view."""
        self.flush()
        with self._lock:
            rows = self._db.execute(
                f"SELECT record FROM workloads WHERE created_at >= ? AND {CHARGED} ORDER BY created_at",
                (at,)).fetchall()
        return [Workload.from_json(json.loads(r[0])) for r in rows]

    def prune_peers(self, my_id: str, *, keep: int, max_age_s: float) -> int:
        """Retention for what peers replicated: their finished records past the ``keep`` newest, or
        older than ``max_age_s``, are deleted. This node's own records (it started or served them)
        are kept: they carry its history and the spend it rebuilds at start. Returns how many went."""
        self.flush()
        if self.trouble is not None:
            return 0
        peers = ("json_extract(record, '$.origin_node_id') IS NOT ? AND "
                 "json_extract(record, '$.serving_node_id') IS NOT ? AND "
                 f"state NOT IN ({','.join('?' * len(ACTIVE_STATES))})")
        args = (my_id, my_id, *ACTIVE_STATES)
        try:
            with self._lock:
                cur = self._db.execute(
                    f"DELETE FROM workloads WHERE id IN (SELECT id FROM workloads WHERE {peers} "
                    "AND (created_at < ? OR id IN (SELECT id FROM workloads WHERE " + peers +
                    " ORDER BY created_at DESC LIMIT -1 OFFSET ?)))",
                    (*args, time.time() - max_age_s, *args, keep))
                return cur.rowcount
        except sqlite3.Error as exc:
            if not is_storage_trouble(exc):
                raise
            return 0

    def mark_interrupted(self, node_id: str, reason: str) -> int:
        """At start-up: work that was running when the node died did not finish."""
        jobs = self.list(active_only=True, limit=10_000)
        now = time.time()
        count = 0
        for job in jobs:
            if node_id not in (job.origin_node_id, job.serving_node_id):
                continue
            job.state, job.error, job.finished_at = "failed", reason, now
            self.save(job)
            count += 1
        return count

    def close(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
        self.flush()
        if self._pending:
            log.warning("%d job records could not be written to %s (%s); they are lost with this stop",
                        len(self._pending), self.path, self.trouble)
        with self._lock:
            self._db.close()
