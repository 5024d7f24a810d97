"""The workload record: metadata about one inference request, never its text."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

from app.services.jobs.requester import Requester

if TYPE_CHECKING:
    from app.services.api.snapshots import JobRow

# "refused": turned away by a requester limit (daily spend, rate) before any upstream was asked.
JobState = Literal["queued", "running", "completed", "failed", "cancelled", "refused"]
ACTIVE_STATES = ("queued", "running")


def new_job_id() -> str:
    """A random (version 4) UUID's hex, as ``uuid.uuid4().hex`` writes it, without building the UUID
    object: a job id is made on every request's way to its first byte, at a quarter of the cost."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return raw.hex()


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

    def row(self) -> JobRow:
        """The record as ``pairwise jobs --json`` prints it and the Jobs view reads it."""
        requester = self.requester
        row: JobRow = {
            "id": self.id, "model": self.model, "api": self.api, "origin_node": self.origin_node,
            "origin_node_id": self.origin_node_id,
            "requester": {"node_id": requester.node_id, "node_name": requester.node_name, "key": requester.key,
                          "app": requester.app, "authenticated": requester.authenticated},
            "serving_node": self.serving_node, "serving_node_id": self.serving_node_id, "engine": self.engine,
            "state": self.state, "created_at": self.created_at, "started_at": self.started_at,
            "finished_at": self.finished_at, "ttfb_ms": self.ttfb_ms, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "error": self.error, "off_lan": self.off_lan,
            "rented_node": self.rented_node, "cost_usd": self.cost_usd, "route": self.route,
            "updated_at": self.updated_at, "requester_text": requester.label,
        }
        if self.finished_at is not None and self.started_at is not None:
            row["duration_s"] = round(self.finished_at - self.started_at, 3)
        return row

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Workload:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["requester"] = Requester.from_json(data.get("requester"), node_id=str(data.get("origin_node_id") or ""),
                                                  node_name=str(data.get("origin_node") or ""))
        return cls(**values)


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Workload))
