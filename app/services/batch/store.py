"""Batches, their lines and their files, in the node's home (``batches/``: ``batches.db`` and ``files/``).

What makes a batch exact across a crash: a line is a row, and its answer is written into that row
in the same statement that marks it done (``finish_line``, which only ever changes a pending line).
A line run twice (the node was killed after the engine answered, before the row was written) still
has one row, so one answer in the output. The output and error files are written from the rows
when the batch finalizes, under ids fixed by the batch's, so finalizing again rewrites the same files.

SQLite in WAL mode, ``synchronous=NORMAL``: a commit survives a killed process; the last commits
before a power cut may be lost, and those lines simply run again. Inputs and outputs are the
user's data: they stay here until the file or the batch is deleted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.home import write_private
from app.services.batch.lines import BadLine, Request
from app.services.batch.shapes import FileObject, FilePurpose, OutputLine, RequestCounts

LineState = Literal["pending", "done", "error"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    id TEXT PRIMARY KEY, purpose TEXT NOT NULL, filename TEXT NOT NULL, bytes INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL,
    internal TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lines (
    batch_id TEXT NOT NULL, idx INTEGER NOT NULL, custom_id TEXT, model TEXT, api TEXT, operation TEXT,
    body TEXT, state TEXT NOT NULL, result TEXT, copy TEXT, copy_kind TEXT, prompt_tokens INTEGER,
    completion_tokens INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (batch_id, idx)
);
CREATE INDEX IF NOT EXISTS lines_state ON lines(batch_id, state);
"""


@dataclass
class Counts:
    total: int = 0
    done: int = 0
    error: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def pending(self) -> int:
        return self.total - self.done - self.error

    def request_counts(self) -> RequestCounts:
        return {"total": self.total, "completed": self.done, "failed": self.error}


class BatchStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files_dir = root / "files"
        self.files_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._db = sqlite3.connect(root / "batches.db", isolation_level=None)
        os.chmod(root / "batches.db", 0o600)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    # -- files ----------------------------------------------------------------------------------------------

    def path_of(self, file_id: str) -> Path:
        return self.files_dir / f"{file_id}.jsonl"

    def add_file(self, file_id: str, purpose: FilePurpose, filename: str, content: bytes) -> FileObject:
        write_private(self.path_of(file_id), content)
        now = int(time.time())
        self._db.execute("INSERT OR REPLACE INTO files(id, purpose, filename, bytes, created_at) VALUES (?,?,?,?,?)",
                         (file_id, purpose, filename, len(content), now))
        return _file_object(file_id, purpose, filename, len(content), now)

    def adopt_file(self, file_id: str, purpose: FilePurpose, filename: str, written: Path, size: int) -> FileObject:
        """A file already streamed to a private temporary path (an upload), moved into place."""
        os.replace(written, self.path_of(file_id))
        now = int(time.time())
        self._db.execute("INSERT INTO files(id, purpose, filename, bytes, created_at) VALUES (?,?,?,?,?)",
                         (file_id, purpose, filename, size, now))
        return _file_object(file_id, purpose, filename, size, now)

    def file(self, file_id: str) -> FileObject | None:
        row = self._db.execute("SELECT id, purpose, filename, bytes, created_at FROM files WHERE id=?",
                               (file_id,)).fetchone()
        return _file_object(*row) if row else None

    def files(self, purpose: str | None = None) -> list[FileObject]:
        query = "SELECT id, purpose, filename, bytes, created_at FROM files"
        rows = self._db.execute(query + " WHERE purpose=? ORDER BY created_at DESC, id" if purpose else
                                query + " ORDER BY created_at DESC, id", (purpose,) if purpose else ()).fetchall()
        return [_file_object(*row) for row in rows]

    def content(self, file_id: str) -> bytes:
        return self.path_of(file_id).read_bytes()

    def delete_file(self, file_id: str) -> bool:
        gone = self._db.execute("DELETE FROM files WHERE id=?", (file_id,)).rowcount > 0
        self.path_of(file_id).unlink(missing_ok=True)
        return gone

    # -- batches ---------------------------------------------------------------------------------------------

    def add_batch(self, batch_id: str, created_at: int, status: str, record: Mapping[str, object],
                  internal: Mapping[str, object]) -> None:
        self._db.execute("INSERT INTO batches(id, created_at, status, record, internal) VALUES (?,?,?,?,?)",
                         (batch_id, created_at, status, json.dumps(record), json.dumps(internal)))

    def save_batch(self, batch_id: str, status: str, record: Mapping[str, object],
                   internal: Mapping[str, object]) -> None:
        self._db.execute("UPDATE batches SET status=?, record=?, internal=? WHERE id=?",
                         (status, json.dumps(record), json.dumps(internal), batch_id))

    def batch(self, batch_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        row = self._db.execute("SELECT record, internal FROM batches WHERE id=?", (batch_id,)).fetchone()
        return (json.loads(row[0]), json.loads(row[1])) if row else None

    def batch_ids(self, *, statuses: tuple[str, ...] | None = None) -> list[str]:
        if statuses:
            marks = ",".join("?" * len(statuses))
            rows = self._db.execute(f"SELECT id FROM batches WHERE status IN ({marks}) ORDER BY created_at DESC, id",
                                    statuses).fetchall()
        else:
            rows = self._db.execute("SELECT id FROM batches ORDER BY created_at DESC, id DESC").fetchall()
        return [row[0] for row in rows]

    def delete_batch(self, batch_id: str) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM lines WHERE batch_id=?", (batch_id,))
            self._db.execute("DELETE FROM batches WHERE id=?", (batch_id,))

    # -- lines -----------------------------------------------------------------------------------------------

    def add_lines(self, batch_id: str, lines: list[Request | BadLine], bad: list[OutputLine],
                  status: str, record: Mapping[str, object], internal: Mapping[str, object]) -> None:
        """Every line of a validated batch and the batch's next state, in one transaction (a batch
        validated twice, after a crash, keeps the rows of the first time)."""
        bad_by_index = dict(zip([b.index for b in lines if isinstance(b, BadLine)], bad, strict=True))
        with self._transaction():
            for line in lines:
                if isinstance(line, Request):
                    self._db.execute(
                        "INSERT OR IGNORE INTO lines(batch_id, idx, custom_id, model, api, operation, body, state) "
                        "VALUES (?,?,?,?,?,?,?, 'pending')",
                        (batch_id, line.index, line.custom_id, line.model, line.api, line.operation,
                         json.dumps(line.body)))
                else:
                    self._db.execute(
                        "INSERT OR IGNORE INTO lines(batch_id, idx, custom_id, state, result) "
                        "VALUES (?,?,?, 'error', ?)",
                        (batch_id, line.index, line.custom_id, json.dumps(bad_by_index[line.index])))
            self._db.execute("UPDATE batches SET status=?, record=?, internal=? WHERE id=?",
                             (status, json.dumps(record), json.dumps(internal), batch_id))

    def pending(self, batch_id: str) -> list[Request]:
        rows = self._db.execute("SELECT idx, custom_id, api, operation, model, body FROM lines "
                                "WHERE batch_id=? AND state='pending' ORDER BY idx", (batch_id,)).fetchall()
        return [Request(idx, cid, api, op, model, json.loads(body)) for idx, cid, api, op, model, body in rows]

    def finish_line(self, batch_id: str, index: int, state: LineState, result: OutputLine, copy: str | None,
                    prompt_tokens: int = 0, completion_tokens: int = 0, copy_kind: str | None = None) -> bool:
        """The line's answer (or final error) and its end, in one statement; False when it had
        already ended (then nothing changes: the first answer stands)."""
        cursor = self._db.execute(
            "UPDATE lines SET state=?, result=?, copy=?, copy_kind=?, prompt_tokens=?, completion_tokens=? "
            "WHERE batch_id=? AND idx=? AND state='pending'",
            (state, json.dumps(result), copy, copy_kind, prompt_tokens, completion_tokens, batch_id, index))
        return cursor.rowcount == 1

    def count_attempt(self, batch_id: str, index: int) -> None:
        self._db.execute("UPDATE lines SET attempts=attempts+1 WHERE batch_id=? AND idx=?", (batch_id, index))

    def end_pending(self, batch_id: str, results: Iterator[tuple[int, OutputLine]]) -> None:
        """Lines that will not run (cancelled, expired, no copy left) to the error file, in one transaction."""
        with self._transaction():
            for index, result in results:
                self._db.execute("UPDATE lines SET state='error', result=? WHERE batch_id=? AND idx=? "
                                 "AND state='pending'", (json.dumps(result), batch_id, index))

    def counts(self, batch_id: str) -> Counts:
        counts = Counts()
        for state, number, prompt, completion in self._db.execute(
                "SELECT state, count(*), sum(coalesce(prompt_tokens, 0)), sum(coalesce(completion_tokens, 0)) "
                "FROM lines WHERE batch_id=? GROUP BY state", (batch_id,)):
            counts.total += number
            counts.prompt_tokens += prompt or 0
            counts.completion_tokens += completion or 0
            if state == "done":
                counts.done = number
            elif state == "error":
                counts.error = number
        return counts

    def done_by_copy(self, batch_id: str) -> dict[str, int]:
        rows = self._db.execute("SELECT copy, count(*) FROM lines WHERE batch_id=? AND state='done' GROUP BY copy",
                                (batch_id,)).fetchall()
        return {copy or "?": number for copy, number in rows}

    def kind_of(self, batch_id: str, copy: str) -> str:
        row = self._db.execute("SELECT copy_kind FROM lines WHERE batch_id=? AND copy=? AND copy_kind IS NOT NULL "
                               "LIMIT 1", (batch_id, copy)).fetchone()
        return str(row[0]) if row else "?"

    def results(self, batch_id: str, state: LineState) -> bytes:
        rows = self._db.execute("SELECT result FROM lines WHERE batch_id=? AND state=? ORDER BY idx",
                                (batch_id, state)).fetchall()
        return b"".join(row[0].encode() + b"\n" for row in rows)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _file_object(file_id: str, purpose: str, filename: str, size: int, created_at: int) -> FileObject:
    kind: FilePurpose = "batch_output" if purpose == "batch_output" else "batch"
    return {"id": file_id, "object": "file", "bytes": size, "created_at": created_at, "filename": filename,
            "purpose": kind, "status": "processed", "expires_at": None, "status_details": None}
