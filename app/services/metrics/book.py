"""What ``/metrics`` counts, kept as plain numbers: requests, errors, tokens and the time-to-first-byte
and duration histograms, per upstream and route reason.

The book listens to the job seam (the ``WorkloadRunning`` and ``WorkloadFinished`` events the job
tracker publishes when a job's first byte arrived and when it ended, with its usage), never to the
byte loop: a stream costs it two dict updates whatever its length and whichever path carried it.
Records replicated from peers (``WorkloadUpdated``) are not counted: each node counts what it handled.
Rendering the text is ``text.py``'s, imported on the first scrape."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.services.errors import RequesterLimitError, UpstreamError, UpstreamRefused
from app.services.events import Event, JobJson, WorkloadFinished, WorkloadRunning

if TYPE_CHECKING:
    from app.services.backends.base import Upstream

# Seconds. A first byte is milliseconds on a LAN and up to minutes when a rented GPU wakes.
TTFB_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)
DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)

# The first words of a route part (routing/why.py) and the reason they name; failover wins when present.
REASONS = (("affinity:", "affinity"), ("policy:", "policy"), ("load:", "load"), ("only copy:", "only_copy"))
NO_UPSTREAM = "none"  # refused or unserved before any upstream was asked

Labels = tuple[str, str, str]  # (serving node, upstream, reason)


def route_reason(route: str | None) -> str:
    """The low-cardinality reason of a job's route line: affinity, policy, load, only_copy, failover or none."""
    if not route:
        return "none"
    if "failover: " in route:
        return "failover"
    for part in route.split(" | "):
        for prefix, reason in REASONS:
            if part.startswith(prefix):
                return reason
    return "other"


@dataclass
class Histogram:
    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)  # per bucket, not cumulative (+Inf last)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.buckets) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1


@dataclass
class MetricsBook:
    requests: dict[tuple[str, str, str, str], int] = field(default_factory=dict)  # labels + final state
    errors: dict[Labels, int] = field(default_factory=dict)
    tokens: dict[tuple[str, str, str], int] = field(default_factory=dict)  # node, upstream, prompt|completion
    ttfb: dict[Labels, Histogram] = field(default_factory=dict)
    duration: dict[Labels, Histogram] = field(default_factory=dict)
    # (node, upstream, kind, why): attempts that failed before their first byte, the failover's count.
    attempts_failed: dict[tuple[str, str, str, str], int] = field(default_factory=dict)

    def on_attempt_failed(self, upstream: Upstream, exc: UpstreamError) -> None:
        # The two refusals are the caller's cap or a peer's rule, not the upstream's fault.
        why = "limit" if isinstance(exc, RequesterLimitError) else "refused" if isinstance(exc, UpstreamRefused) else "error"
        key = (upstream.node_name, upstream.display_name(), upstream.kind, why)
        self.attempts_failed[key] = self.attempts_failed.get(key, 0) + 1

    def on_event(self, event: Event) -> None:
        if isinstance(event, WorkloadRunning):
            self._running(event.job)
        elif isinstance(event, WorkloadFinished):
            self._finished(event.job)

    @staticmethod
    def labels(job: JobJson) -> Labels:
        upstream = job.get("rented_node") or job.get("engine") or NO_UPSTREAM
        return (str(job.get("serving_node") or NO_UPSTREAM), str(upstream), route_reason(job.get("route")))

    def _running(self, job: JobJson) -> None:
        ttfb_ms = job.get("ttfb_ms")
        if isinstance(ttfb_ms, (int, float)):
            key = self.labels(job)
            found = self.ttfb.get(key)
            if found is None:
                found = self.ttfb[key] = Histogram(TTFB_BUCKETS)
            found.observe(ttfb_ms / 1000)

    def _finished(self, job: JobJson) -> None:
        key = self.labels(job)
        state = str(job.get("state") or "failed")
        counted = (*key, state)
        self.requests[counted] = self.requests.get(counted, 0) + 1
        if state == "failed":
            self.errors[key] = self.errors.get(key, 0) + 1
        for kind in ("prompt", "completion"):
            value = job.get(f"{kind}_tokens")
            if isinstance(value, int) and value > 0:
                token_key = (key[0], key[1], kind)
                self.tokens[token_key] = self.tokens.get(token_key, 0) + value
        duration = job.get("duration_s")
        if isinstance(duration, (int, float)) and job.get("ttfb_ms") is not None:
            found = self.duration.get(key)
            if found is None:
                found = self.duration[key] = Histogram(DURATION_BUCKETS)
            found.observe(float(duration))
