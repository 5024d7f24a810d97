"""``BatchService``: the Files and Batch APIs of a node, and the runs that carry its batches.

Every batch lives in the store (``store.py``) from the moment it is created; a run (``runner.py``)
is only the task that moves it on, started again for every active batch when the node starts.
Money (``money.py``) decides which copies a batch may still use and what it has cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.services.backends.base import Caller, Upstream
from app.services.batch.context import BatchNode, RunCopies
from app.services.batch.lines import BadLine, Request, parse_input
from app.services.batch.money import BatchMoney, parse_budget, parse_deadline
from app.services.batch.runner import BatchRun, error_line
from app.services.batch.shapes import (
    ACTIVE,
    DEFAULT_WINDOW,
    ENDPOINTS,
    BatchErrorItem,
    BatchObject,
    CopyRow,
    FileObject,
    OutputLine,
    PairwiseProgress,
    duration_s,
    new_id,
)
from app.services.batch.store import BatchStore
from app.services.errors import ConfigError, NotFound, RefusedError
from app.services.guard import guarded
from app.services.jobs.records import Workload
from app.services.jobs.requester import Requester
from app.services.keys.store import models_allow

if TYPE_CHECKING:
    from app.services.api.snapshots import DeletedBatch

log = logging.getLogger(__name__)

MAX_METADATA_KEYS = 16


class BatchInvalid(ConfigError):
    title = "Invalid batch"


class BatchNotFound(NotFound):
    title = "No such batch"


class BatchConflict(RefusedError):
    title = "Not now"
    status = 409


class BatchService:
    def __init__(self, node: BatchNode) -> None:
        self.node = node
        self.store = BatchStore(node.home.batches_dir)
        self.money = BatchMoney(node, self)
        self.runs: dict[str, BatchRun] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def start(self) -> None:
        for batch_id in reversed(self.store.batch_ids(statuses=ACTIVE)):
            self._launch(batch_id)

    async def stop(self) -> None:
        """The runs end where they are; their batches resume when the node starts again."""
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def close(self) -> None:
        self.store.close()

    def _launch(self, batch_id: str) -> None:
        record, internal = self._load(batch_id)
        requester = Requester.from_json(internal.get("requester"), node_id=self.node.node_id,
                                        node_name=self.node.name)
        caller = Caller(requester=requester, allow_off_lan=bool(internal.get("allow_off_lan", True)),
                        off_lan_rule=str(internal.get("off_lan_rule") or "setting off_lan: deny"))
        run = BatchRun(self, batch_id, caller)
        self.runs[batch_id] = run

        async def carry() -> None:
            with guarded(f"batch {batch_id}", log):
                await run.run()
            self.tasks.pop(batch_id, None)

        self.tasks[batch_id] = asyncio.create_task(carry(), name=f"batch {batch_id}")

    # -- files -----------------------------------------------------------------------------------------------

    def new_upload_path(self) -> tuple[str, Path]:
        file_id = new_id("file")
        return file_id, self.store.files_dir / f".{file_id}.upload"

    def add_upload(self, file_id: str, purpose: str, filename: str, written: Path, size: int) -> FileObject:
        if purpose != "batch":
            written.unlink(missing_ok=True)
            raise BatchInvalid(f"this node keeps files for batches only: purpose must be 'batch', not {purpose!r}")
        return self.store.adopt_file(file_id, "batch", filename[:255] or "upload.jsonl", written, size)

    def file(self, file_id: str) -> FileObject:
        found = self.store.file(file_id)
        if found is None:
            raise NotFound(f"No such File object: {file_id}", title="No such file")
        return found

    def files(self, purpose: str | None = None) -> list[FileObject]:
        return self.store.files(purpose)

    def content(self, file_id: str) -> bytes:
        self.file(file_id)
        return self.store.content(file_id)

    def delete_file(self, file_id: str) -> dict[str, Any]:
        self.file(file_id)
        self.store.delete_file(file_id)
        return {"id": file_id, "object": "file", "deleted": True}

    # -- batches ---------------------------------------------------------------------------------------------

    def create(self, *, input_file_id: object, endpoint: object, completion_window: object = DEFAULT_WINDOW,
               metadata: object = None, requester: Requester, allow_off_lan: bool = True,
               off_lan_rule: str = "setting off_lan: deny", key_models: list[str] | None = None,
               rented_window: str | None = None) -> BatchObject:
        """A batch of the lines of an uploaded file; ``rented_window``: the batch window rented for
        it (``batch run --rent``), which the batch stops when it ends, if no one else used it."""
        if not isinstance(input_file_id, str) or self.store.file(input_file_id) is None:
            raise BatchNotFound(f"No such File object: {str(input_file_id)[:80]}", title="No such file")
        found = self.store.file(input_file_id) if isinstance(input_file_id, str) else None
        if found is not None and found["purpose"] != "batch":
            raise BatchInvalid(f"file {input_file_id} is a batch's output, not an input (purpose 'batch')")
        if not isinstance(endpoint, str) or endpoint not in ENDPOINTS:
            raise BatchInvalid(f"endpoint must be one of {', '.join(ENDPOINTS)}, not {str(endpoint)[:80]!r}")
        window = completion_window if isinstance(completion_window, str) else DEFAULT_WINDOW
        window_s = duration_s(window)
        if window_s is None:
            raise BatchInvalid(f"completion_window must be a duration such as 24h or 90m, not {window[:40]!r}")
        meta = _metadata(metadata)
        now = int(time.time())
        budget = parse_budget(meta.get("budget_usd"))
        deadline_at = parse_deadline(meta.get("deadline"), now)
        batch_id = new_id("batch")
        # Its requests name the batch, so Jobs (and the budget's "only user" rule) can tell them.
        requester = Requester(requester.node_id, requester.node_name, key=requester.key,
                              app=f"pairwise batch {batch_id}", authenticated=requester.authenticated)
        record: dict[str, Any] = {
            "id": batch_id, "object": "batch", "endpoint": endpoint, "model": None, "errors": None,
            "input_file_id": input_file_id, "completion_window": window, "status": "validating",
            "output_file_id": None, "error_file_id": None, "created_at": now, "in_progress_at": None,
            "expires_at": now + int(window_s), "finalizing_at": None, "completed_at": None, "failed_at": None,
            "expired_at": None, "cancelling_at": None, "cancelled_at": None, "metadata": meta or None,
        }
        internal: dict[str, Any] = {"requester": requester.to_json(), "allow_off_lan": allow_off_lan,
                                    "off_lan_rule": off_lan_rule, "key_models": key_models or [],
                                    "budget_usd": budget, "deadline_at": deadline_at,
                                    "rented_window": rented_window}
        self.store.add_batch(batch_id, now, "validating", record, internal)
        self._launch(batch_id)
        return self.view(batch_id)

    def view(self, batch_id: str) -> BatchObject:
        record, internal = self._load(batch_id)
        counts = self.store.counts(batch_id)
        run = self.runs.get(batch_id)
        rate = run.lines_per_s() if run else 0.0
        copies = self._copies(batch_id, run, None)
        ended_at = record.get("completed_at") or record.get("cancelled_at") or record.get("expired_at")
        if ended_at and record.get("in_progress_at"):  # an ended batch: its rates over the whole run
            ran_s = max(1, ended_at - record["in_progress_at"])
            rate = counts.done / ran_s
            copies = self._copies(batch_id, run, ran_s)
        cost = self.money.cost(batch_id, internal)
        progress: PairwiseProgress = {
            "done": counts.done + counts.error, "pending": counts.pending, "lines_per_s": round(rate, 3),
            "eta_s": round(counts.pending / rate, 1) if rate > 0 and counts.pending else None,
            "cost_usd": round(cost, 4), "budget_usd": internal.get("budget_usd"),
            "deadline_at": internal.get("deadline_at"), "rented_stopped": internal.get("rented_stopped"),
            "rented_since": min((internal.get("rented_since") or {}).values(), default=None),
            "copies": copies,
        }
        metadata = dict(record.get("metadata") or {})
        metadata["cost_usd"] = f"{cost:.4f}"
        batch: BatchObject = {
            **record,  # type: ignore[typeddict-item]
            "request_counts": counts.request_counts(),
            "usage": {"input_tokens": counts.prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": counts.completion_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": counts.prompt_tokens + counts.completion_tokens},
            "metadata": metadata,
            "pairwise": progress,
        }
        return batch

    def _copies(self, batch_id: str, run: BatchRun | None, ran_s: float | None) -> list[CopyRow]:
        """Each copy's lines done (from the store, so they survive a restart) and its rate now, or
        over the whole run (``ran_s``) once the batch ended."""
        rows = {row["copy"]: row for row in ([r.row(n) for r, n in run.copy_rows()] if run else [])}
        for label, done in self.store.done_by_copy(batch_id).items():
            row = rows.get(label)
            if row is None:
                rows[label] = {"copy": label, "kind": self.store.kind_of(batch_id, label), "done": done,
                               "lines_per_s": 0.0, "tokens_per_s": 0.0, "in_flight": 0}
            else:
                row["done"] = done
            if ran_s:
                rows[label]["lines_per_s"] = round(done / ran_s, 3)
        return sorted(rows.values(), key=lambda r: -r["done"])

    def page(self, *, after: str | None = None, limit: int = 20) -> dict[str, Any]:
        ids = self.store.batch_ids()
        if after is not None:
            ids = ids[ids.index(after) + 1:] if after in ids else []
        chosen = ids[:limit]
        data = [self.view(batch_id) for batch_id in chosen]
        return {"object": "list", "data": data, "first_id": chosen[0] if chosen else None,
                "last_id": chosen[-1] if chosen else None, "has_more": len(ids) > len(chosen)}

    def cancel(self, batch_id: str) -> BatchObject:
        record, internal = self._load(batch_id)
        status = record["status"]
        if status in ("cancelling", "cancelled"):
            return self.view(batch_id)
        if status not in ("validating", "in_progress"):
            raise BatchConflict(f"Cannot cancel a batch with status {status}.")
        record["status"], record["cancelling_at"] = "cancelling", int(time.time())
        self.store.save_batch(batch_id, "cancelling", record, internal)
        run = self.runs.get(batch_id)
        if run is not None:
            run.poke()
        elif batch_id not in self.tasks:
            self._launch(batch_id)
        return self.view(batch_id)

    def delete(self, batch_id: str) -> DeletedBatch:
        """A batch and its input, output and error files, gone from this node's home."""
        record, _ = self._load(batch_id)
        if record["status"] in ACTIVE:
            raise BatchConflict(f"batch {batch_id} is {record['status']}: cancel it first, then delete it")
        for key in ("input_file_id", "output_file_id", "error_file_id"):
            if record.get(key):
                self.store.delete_file(record[key])
        self.store.delete_batch(batch_id)
        self.runs.pop(batch_id, None)
        return {"id": batch_id, "object": "batch", "deleted": True}

    async def wait(self, batch_id: str) -> BatchObject:
        """The batch once its run has ended (tests and the CLI's ``--wait`` ask this)."""
        task = self.tasks.get(batch_id)
        if task is not None:
            await asyncio.shield(task)
        return self.view(batch_id)

    def measured_rate(self, upstream_key: str) -> float | None:
        """Lines per second a run of this node measured on that copy lately, if one did."""
        for run in self.runs.values():
            rate = run.rates.get(upstream_key)
            if rate is not None and rate.finished:
                return rate.rates()[0]
        return None

    # -- what a run asks -------------------------------------------------------------------------------------

    def status(self, batch_id: str) -> str:
        return str(self._load(batch_id)[0]["status"])

    def _load(self, batch_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        found = self.store.batch(batch_id)
        if found is None:
            raise BatchNotFound(f"No such Batch object: {batch_id[:80]}")
        return found

    def validate(self, batch_id: str) -> None:
        record, internal = self._load(batch_id)
        now = int(time.time())
        try:
            content = self.store.content(record["input_file_id"])
        except OSError:
            content = None
        errors: list[BatchErrorItem]
        if content is None:
            errors = [{"code": "missing_file", "message": "the input file was deleted before the batch ran",
                       "line": None, "param": "input_file_id"}]
            parsed = None
        else:
            parsed = parse_input(content, record["endpoint"])
            errors = list(parsed.errors)
        if parsed is None or errors:
            record.update(status="failed", failed_at=now, errors={"object": "list", "data": errors})
            self.store.save_batch(batch_id, "failed", record, internal)
            return
        key_models: list[str] = internal.get("key_models") or []
        lines: list[Request | BadLine] = []
        for line in parsed.lines:
            if isinstance(line, Request) and not models_allow(key_models, line.model):
                line = BadLine(line.index, line.custom_id, "model_not_allowed",
                               f"line {line.index + 1}: the batch's key may not use model {line.model[:200]!r}")
            lines.append(line)
        bad: list[OutputLine] = [error_line(b.custom_id, b.code, b.message) for b in lines if isinstance(b, BadLine)]
        models = [line.model for line in lines if isinstance(line, Request)]
        record["model"] = models[0] if models else None
        next_status = record["status"] if record["status"] == "cancelling" else "in_progress"
        record["status"], record["in_progress_at"] = next_status, now
        self.store.add_lines(batch_id, lines, bad, next_status, record, internal)

    def ending_reason(self, batch_id: str) -> tuple[str, str] | None:
        """Why the batch takes no more lines (cancelled, its window over), or None while it runs on."""
        record, _ = self._load(batch_id)
        if record["status"] == "cancelling":
            return "batch_cancelled", "The batch was cancelled before this request ran."
        if record.get("expires_at") and time.time() >= record["expires_at"]:
            return "batch_expired", "This request could not be executed before the completion window expired."
        return None

    def end_pending(self, batch_id: str, reason: tuple[str, str]) -> None:
        code, message = reason
        pending = self.store.pending(batch_id)

        def lines() -> Iterator[tuple[int, OutputLine]]:
            for request in pending:
                yield request.index, error_line(request.custom_id, code, message)

        self.store.end_pending(batch_id, lines())
        record, internal = self._load(batch_id)
        internal["ended_by"] = code
        self.store.save_batch(batch_id, record["status"], record, internal)

    def no_copy(self, batch_id: str, model: str, refusals: str, run: RunCopies) -> None:
        """Every copy of ``model`` refused the batch (or it stopped using them at its budget): its lines
        waiting for one end in the error file, saying why."""
        _, internal = self._load(batch_id)
        stopped = internal.get("rented_stopped")
        if stopped:
            code, why = "budget_reached", f"{stopped}, and no other copy serves '{model}'"
        else:
            code, why = "no_copy", f"no copy of '{model}' may serve this batch: {refusals or 'none left'}"
        taken = run.take_all(model)
        self.store.end_pending(batch_id, ((r.index, error_line(r.custom_id, code, why)) for r in taken))

    def may_use(self, batch_id: str, upstream: Upstream) -> bool:
        return self.money.may_use(batch_id, upstream)

    def served(self, batch_id: str, upstream: Upstream, job: Workload | None, seconds: float) -> None:
        self.money.served(batch_id, upstream, job, seconds)

    def internal(self, batch_id: str) -> dict[str, Any]:
        return self._load(batch_id)[1]

    def save_internal(self, batch_id: str, internal: dict[str, Any]) -> None:
        record, _ = self._load(batch_id)
        self.store.save_batch(batch_id, record["status"], record, internal)

    def finalize(self, batch_id: str) -> None:
        record, internal = self._load(batch_id)
        now = int(time.time())
        cancelling = record["status"] == "cancelling"
        if not cancelling and record["status"] != "finalizing":
            record["status"], record["finalizing_at"] = "finalizing", now
            self.store.save_batch(batch_id, "finalizing", record, internal)
        stem = batch_id.removeprefix("batch_")
        for state, key, suffix in (("done", "output_file_id", "output"), ("error", "error_file_id", "errors")):
            content = self.store.results(batch_id, state)  # type: ignore[arg-type]
            if content:
                file_id = f"file-{stem}{suffix[:3]}"
                self.store.add_file(file_id, "batch_output", f"{batch_id}_{suffix}.jsonl", content)
                record[key] = file_id
        final = "cancelled" if cancelling else "expired" if internal.get("ended_by") == "batch_expired" else "completed"
        record["status"] = final
        record[{"cancelled": "cancelled_at", "expired": "expired_at", "completed": "completed_at"}[final]] = now
        self.store.save_batch(batch_id, final, record, internal)
        self.money.finished(batch_id)


def _metadata(metadata: object) -> dict[str, str]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or len(metadata) > MAX_METADATA_KEYS:
        raise BatchInvalid(f"metadata must be an object of at most {MAX_METADATA_KEYS} string values")
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str) or len(key) > 64 or len(value) > 512:
            raise BatchInvalid("metadata keys are strings of at most 64 characters, values of at most 512")
    return dict(metadata)
