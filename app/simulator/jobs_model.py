"""Jobs: records, stages (SCHEDULING → RUNNING → COMPLETED/CANCELED/ERROR) and billing.

Stage changes are evaluated lazily at the instant they were due, like endpoints. Scheduling lasts
job_scheduling_s; a job runs until canceled, until job_run_s (when set) or until its timeout, which
is in HF seconds and scaled to simulated time (timeoutSeconds / 60 × minute_s), then ERROR.
A running job's server first loads its model for job_loading_s (its exposed port answers 503 until
then); a model listed in ``load_errors`` fails there instead: ERROR with that message, and a
traceback in the logs. Every job keeps log lines (wall time, text) for the SSE logs route.
Billing: RUNNING time, per started minute, at the flavor's price plus the $0.01/h job fee.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.simulator import fixtures
from app.simulator.endpoints_model import creator
from app.simulator.httputil import hex_id, iso_of
from app.simulator.ledger import Ledger, Meter
from app.simulator.settings import SimSettings
from app.tinymodel import RunningTiny

TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")
DEFAULT_TIMEOUT_S = 1800
_REPO_LIKE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass
class Job:
    id: str
    namespace: str
    user: str
    spec: dict[str, Any]
    since: float
    created: float
    stage: str = "SCHEDULING"
    message: str | None = None
    created_at: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    running_since: float | None = None
    first_run_at: float | None = None
    running_secs: float = 0.0
    tiny: RunningTiny | None = None
    ready: bool = False  # the server finished loading: the exposed port answers
    logs: list[tuple[float, str]] = field(default_factory=list)  # (wall time, line)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.id}"

    @property
    def ports(self) -> list[int]:
        return list((self.spec.get("expose") or {}).get("ports") or [])

    @property
    def public_ports(self) -> list[int]:
        return list((self.spec.get("expose") or {}).get("portsPublic") or [])

    def served_model(self) -> str:
        """The model id the exposed server answers to: MODEL_ID, else the first org/name argument."""
        env = self.spec.get("environment") or {}
        if isinstance(env.get("MODEL_ID"), str):
            return str(env["MODEL_ID"])
        for token in [*(self.spec.get("command") or []), *(self.spec.get("arguments") or [])]:
            if isinstance(token, str) and _REPO_LIKE.match(token):
                return token
        return "tiny:latest"


class JobBook:
    def __init__(self, settings: SimSettings, ledger: Ledger, clock: Callable[[], float]) -> None:
        self.settings = settings
        self.ledger = ledger
        self.clock = clock
        self.base_url = ""
        self.prices = fixtures.job_flavor_prices()
        self._jobs: dict[str, Job] = {}
        self.load_errors: dict[str, str] = {}  # model -> the error its server dies with while loading

    def wall(self, at: float) -> float:
        """The wall time of monotonic instant ``at`` (stages are settled lazily, after the fact)."""
        return time.time() - (self.clock() - at)

    def log(self, job: Job, at: float, *lines: str) -> None:
        job.logs.extend((self.wall(at), line) for line in lines)

    def price(self, job: Job) -> float:
        return round(self.prices.get(str(job.spec.get("flavor")), 0.0) + fixtures.JOB_FLAT_FEE_PER_HOUR, 6)

    def _meter(self, job: Job) -> Meter:
        return self.ledger.meter(self.ledger.jobs, job.key, self.price(job))

    def add(self, namespace: str, user: str, spec: dict[str, Any]) -> Job:
        now = self.clock()
        job = Job(id=hex_id(), namespace=namespace, user=user, spec=spec, since=now, created=now,
                  created_at=iso_of(self.wall(now)))
        self._jobs[job.id] = job
        self._meter(job)
        return job

    def get(self, namespace: str, job_id: str) -> Job | None:
        job = self._jobs.get(job_id)
        if job is None or job.namespace != namespace:
            return None
        self.advance(job)
        return job

    def in_namespace(self, namespace: str) -> list[Job]:
        jobs = [j for j in self._jobs.values() if j.namespace == namespace]
        for job in jobs:
            self.advance(job)
        return jobs

    def all(self) -> list[Job]:
        return list(self._jobs.values())

    def set_stage(self, job: Job, stage: str, at: float | None = None, message: str | None = None) -> None:
        at = self.clock() if at is None else at
        meter = self._meter(job)
        if stage == "RUNNING":
            meter.open("RUNNING", at, self.price(job))
            job.running_since = at
            job.first_run_at = at
            job.started_at = iso_of(self.wall(at))
            self.log(job, at, f"===== Job started at {job.started_at} =====",
                     f"Pulling {job.spec.get('dockerImage') or job.spec.get('spaceId')}",
                     f"Loading model {job.served_model()}")
        else:
            meter.close(at)
            if job.running_since is not None:
                job.running_secs += at - job.running_since
                job.running_since = None
        if stage in TERMINAL:
            job.finished_at = iso_of(self.wall(at))
            if message:
                self.log(job, at, message)
        job.stage, job.since, job.message = stage, at, message

    def timeout_s(self, job: Job) -> float:
        seconds = job.spec.get("timeoutSeconds") or DEFAULT_TIMEOUT_S
        return float(seconds) / 60 * self.settings.minute_s

    def advance(self, job: Job) -> None:
        now, s = self.clock(), self.settings
        if job.stage == "SCHEDULING" and now >= job.since + s.job_scheduling_s:
            self.set_stage(job, "RUNNING", job.since + s.job_scheduling_s)
        if job.stage == "RUNNING" and not job.ready and job.first_run_at is not None:
            loaded_at = job.first_run_at + s.job_loading_s
            if now >= loaded_at and loaded_at < job.since + self.timeout_s(job):
                error = self.load_errors.get(job.served_model())
                if error is not None:
                    self.log(job, loaded_at, "Traceback (most recent call last):",
                             '  File "/usr/local/bin/serve", line 8, in <module>', f"RuntimeError: {error}")
                    self.set_stage(job, "ERROR", loaded_at, f"Job failed with exit code: 1. {error}")
                    return
                job.ready = True
                self.log(job, loaded_at, "INFO:     Application startup complete.",
                         f"INFO:     Uvicorn running on http://0.0.0.0:{(job.ports or [8000])[0]}")
        if job.stage == "RUNNING":
            timeout_at = job.since + self.timeout_s(job)
            done_at = job.since + s.job_run_s if s.job_run_s is not None else None
            if done_at is not None and done_at <= timeout_at and now >= done_at:
                self.set_stage(job, "COMPLETED", done_at)
            elif now >= timeout_at:
                limit = job.spec.get("timeoutSeconds") or DEFAULT_TIMEOUT_S
                self.set_stage(job, "ERROR", timeout_at, f"Job timed out after {limit}s")

    def to_json(self, job: Job) -> dict[str, Any]:
        now = self.clock()
        running = job.running_secs + (now - job.running_since if job.running_since is not None else 0.0)
        scheduling_end = job.first_run_at if job.first_run_at is not None else (
            job.since if job.stage in TERMINAL else now)
        spec = job.spec
        owner = creator(job.user)
        status: dict[str, Any] = {"stage": job.stage, "message": job.message, "failureCount": 0}
        if job.ports:
            status["exposeUrls"] = [f"{self.base_url}/jobs-expose/{job.id}--{p}" for p in job.ports]
        if (spec.get("ssh") or {}).get("enabled"):
            status["sshUrl"] = f"ssh://{job.id}@ssh.hf.jobs.invalid"
        return {
            "type": "job", "id": job.id, "createdAt": job.created_at, "startedAt": job.started_at,
            "finishedAt": job.finished_at, "dockerImage": spec.get("dockerImage"), "spaceId": spec.get("spaceId"),
            "command": spec.get("command", []), "arguments": spec.get("arguments", []),
            "environment": spec.get("environment", {}), "secrets": sorted((spec.get("secrets") or {}).keys()),
            "flavor": spec.get("flavor"), "arch": spec.get("arch", "amd64"),
            "timeout": spec.get("timeoutSeconds") or DEFAULT_TIMEOUT_S, "labels": spec.get("labels", {}),
            "volumes": spec.get("volumes", []),
            "expose": {"ports": job.ports, "portsPublic": job.public_ports},
            "owner": {**owner, "type": "user", "avatarUrl": f"/avatars/{job.user}.svg"},
            "createdBy": owner, "initiator": {"type": "user", **owner, "avatarUrl": f"/avatars/{job.user}.svg"},
            "durations": {"schedulingSecs": int(max(0.0, scheduling_end - job.created)),
                          "runningSecs": int(running), "totalSecs": int(now - job.created)},
            "status": status,
        }
