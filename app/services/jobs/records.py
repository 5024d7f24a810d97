"""The workload record: metadata about one inference request, never its text."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from app.services.jobs.requester import Requester

# "refused": turned away by a requester limit (daily spend, rate) before any upstream was asked.
JobState = Literal["queued", "running", "completed", "failed", "cancelled", "refused"]
ACTIVE_STATES = ("queued", "running")


def new_job_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Workload:
    model: str
    api: str
    origin_node: str
    origin_node_id: str
    requester: Requester
    id: str = field(default_factory=new_job_id)
    serving_node: str | None = None
    serving_node_id: str | None = None
    engine: str | None = None
    state: JobState = "queued"
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    ttfb_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    off_lan: bool = False
    rented_node: str | None = None
    cost_usd: float | None = None
    # Why it went where it went: fit (size and windows), policy, affinity, load, failover (routing/why.py).
    route: str | None = None
    updated_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        # Every field but the requester is a scalar, so a flat copy equals asdict() at a tenth of its cost (hot path).
        data = {name: getattr(self, name) for name in _FIELD_NAMES}
        data["requester"] = self.requester.to_json()
        if self.finished_at is not None and self.started_at is not None:
            data["duration_s"] = round(self.finished_at - self.started_at, 3)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Workload:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["requester"] = Requester.from_json(data.get("requester"), node_id=str(data.get("origin_node_id") or ""),
                                                  node_name=str(data.get("origin_node") or ""))
        return cls(**values)


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Workload))
