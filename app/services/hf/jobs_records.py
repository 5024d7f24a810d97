"""What the sponsor remembers about each batch window (a Hugging Face Job behind a rented node):
`hf_jobs.json` (0600), per rented-node name. Never a token.

The record outlives the process: after a crash the next start finds the job (and any job the labels
name) and charges the minutes HF billed that were not charged yet (``charged_minutes``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app.home import write_private

log = logging.getLogger(__name__)
FILE_NAME = "hf_jobs.json"


@dataclass
class JobRecord:
    namespace: str
    job_id: str
    model: str
    flavor: str
    engine: str
    window_s: int
    price_per_hour: float  # hardware + the exposed port's fee, as the window was priced
    created_at: float  # wall clock
    stage: str = "SCHEDULING"
    message: str | None = None
    started_at: float | None = None  # HF's startedAt (wall clock)
    finished_at: float | None = None  # HF's finishedAt
    charged_minutes: int = 0  # billed minutes of this job already charged to the meter
    ended_by: str | None = None  # why Pairwise canceled it (idle, budget, exit, start, user), if it did
    last_lines: list[str] = field(default_factory=list)  # the job's last log lines once it ended in error

    def window_ends_at(self, minute_s: float = 60.0) -> float:
        """When HF stops the job at the latest: its start (or, while scheduling, its creation) + the window
        (``minute_s``: real seconds in a billed minute; tests shorten it)."""
        return (self.started_at or self.created_at) + self.window_s / 60 * minute_s

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class JobRecords:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._records: dict[str, JobRecord] = self._load()

    def get(self, name: str) -> JobRecord | None:
        return self._records.get(name)

    def names(self) -> list[str]:
        return list(self._records)

    def put(self, name: str, record: JobRecord) -> None:
        self._records[name] = record
        self.save()

    def forget(self, name: str) -> None:
        if self._records.pop(name, None) is not None:
            self.save()

    def _load(self) -> dict[str, JobRecord]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            known = {f.name for f in fields(JobRecord)}
            return {name: JobRecord(**{k: v for k, v in row.items() if k in known})
                    for name, row in data.items() if isinstance(row, dict)}
        except (OSError, ValueError, TypeError) as exc:
            # Reconcile by label still finds this sponsor's jobs on HF and cancels them.
            log.warning("%s unreadable; jobs are found again by their labels: %s", self.path, exc)
            return {}

    def save(self) -> None:
        write_private(self.path, json.dumps({k: v.to_json() for k, v in self._records.items()}, indent=1).encode())
