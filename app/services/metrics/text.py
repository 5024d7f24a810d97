"""Prometheus' text exposition format (0.0.4) of a node's metrics: the book's counters and histograms,
and the gauges read when scraped (in-flight and eligibility per upstream, spend, state and budget per
rented node). Imported on the first scrape only, so a node nobody scrapes never loads it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from app.services.metrics.book import Histogram, MetricsBook

if TYPE_CHECKING:
    from app.services.rented.manager import RentedManager
    from app.services.routing.registry import UpstreamRegistry

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LabelSet = Mapping[str, str]

# A rented node's states (rented/upstream.py::RentedUpstream.status), one gauge each, 1 for the current.
RENTED_STATES = ("eligible", "cold", "paused", "starting", "unhealthy", "ended", "ineligible")


class ScrapedNode(Protocol):
    registry: UpstreamRegistry
    rented: RentedManager | None


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def label_text(labels: LabelSet) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels.items()) + "}"


def number(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(float(value)) if isinstance(value, float) else str(value)


class Exposition:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help_text: str) -> None:
        self.lines.append(f"# HELP {name} {help_text}")
        self.lines.append(f"# TYPE {name} {kind}")

    def sample(self, name: str, labels: LabelSet, value: float) -> None:
        self.lines.append(f"{name}{label_text(labels)} {number(value)}")

    def histogram(self, name: str, labels: LabelSet, hist: Histogram) -> None:
        running = 0
        for bound, count in zip((*hist.buckets, float("inf")), hist.counts, strict=True):
            running += count
            self.sample(f"{name}_bucket", {**labels, "le": number(bound)}, running)
        self.sample(f"{name}_sum", labels, hist.total)
        self.sample(f"{name}_count", labels, hist.n)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def job_labels(key: tuple[str, ...]) -> dict[str, str]:
    return {"node": key[0], "upstream": key[1], "reason": key[2]}


def render(book: MetricsBook, node: ScrapedNode) -> str:
    out = Exposition()
    out.family("pairwise_requests_total", "counter",
               "Requests this node handled, by serving node, upstream, route reason and final state.")
    for (served, upstream, reason, state), count in sorted(book.requests.items()):
        out.sample("pairwise_requests_total", {**job_labels((served, upstream, reason)), "state": state}, count)
    out.family("pairwise_errors_total", "counter", "Requests that failed, by serving node, upstream and route reason.")
    for key, count in sorted(book.errors.items()):
        out.sample("pairwise_errors_total", job_labels(key), count)
    out.family("pairwise_tokens_total", "counter", "Tokens the upstreams reported (or were estimated), by kind.")
    for (served, upstream, kind), count in sorted(book.tokens.items()):
        out.sample("pairwise_tokens_total", {"node": served, "upstream": upstream, "kind": kind}, count)
    out.family("pairwise_time_to_first_byte_seconds", "histogram",
               "From the request to the upstream's first chunk, by serving node, upstream and route reason.")
    for key, hist in sorted(book.ttfb.items()):
        out.histogram("pairwise_time_to_first_byte_seconds", job_labels(key), hist)
    out.family("pairwise_request_duration_seconds", "histogram",
               "From the first byte's start to the answer's end, by serving node, upstream and route reason.")
    for key, hist in sorted(book.duration.items()):
        out.histogram("pairwise_request_duration_seconds", job_labels(key), hist)
    out.family("pairwise_upstream_attempts_failed_total", "counter",
               "Attempts on an upstream that failed before their first byte (then the next copy was tried), "
               "by why: error, refused (a peer's rule), limit (the caller's cap).")
    for (served, upstream, kind, why), count in sorted(book.attempts_failed.items()):
        out.sample("pairwise_upstream_attempts_failed_total",
                   {"node": served, "upstream": upstream, "kind": kind, "why": why}, count)
    upstream_gauges(out, node.registry)
    if node.rented is not None:
        rented_gauges(out, node.rented)
    return out.text()


def upstream_gauges(out: Exposition, registry: UpstreamRegistry) -> None:
    upstreams = sorted(registry.all(), key=lambda u: u.key)
    rows: list[tuple[dict[str, str], int, int, int]] = []
    for u in upstreams:
        labels = {"upstream": u.display_name(), "kind": u.kind, "node": u.node_name}
        rows.append((labels, u.in_flight, u.capacity, 1 if u.ineligible_reason() is None else 0))
    out.family("pairwise_in_flight", "gauge", "Requests in flight on each upstream.")
    for labels, in_flight, _, _ in rows:
        out.sample("pairwise_in_flight", labels, in_flight)
    out.family("pairwise_capacity", "gauge", "Concurrent requests each upstream is given at most.")
    for labels, _, capacity, _ in rows:
        out.sample("pairwise_capacity", labels, capacity)
    # The breaker's state: 1 while the planner may route to the upstream, 0 while it is held out
    # (unreachable peer, paused or unhealthy rented node, budget reached).
    out.family("pairwise_upstream_eligible", "gauge", "1 while requests may be routed to the upstream, else 0.")
    for labels, _, _, eligible in rows:
        out.sample("pairwise_upstream_eligible", labels, eligible)


def rented_gauges(out: Exposition, rented: RentedManager) -> None:
    names = sorted(rented.nodes)
    spend: list[tuple[str, str, float]] = []
    states: list[tuple[str, str]] = []
    budgets: list[tuple[str, float | None, float | None, bool]] = []
    for name in names:
        node = rented.nodes[name]
        totals = rented.meter.totals(name)
        for period in ("session", "day", "month"):
            spend.append((name, period, float(totals[f"{period}_usd"] or 0.0)))
        states.append((name, node.status()[0]))
        budget = node.decl.budget
        budgets.append((name, budget.usd_per_day, budget.usd_per_month, node.budget_reason is not None))
    out.family("pairwise_rented_spend_usd", "gauge", "What a rented node cost, per period (session, day, month).")
    for name, period, usd in spend:
        out.sample("pairwise_rented_spend_usd", {"rented_node": name, "period": period}, usd)
    out.family("pairwise_rented_state", "gauge", "A rented node's state: 1 for the current one.")
    for name, state in states:
        for candidate in _states_with(state):
            out.sample("pairwise_rented_state", {"rented_node": name, "state": candidate}, 1 if candidate == state else 0)
    out.family("pairwise_rented_budget_usd", "gauge", "A rented node's budget per period (absent: none set).")
    for name, day, month, _ in budgets:
        for period, limit in (("day", day), ("month", month)):
            if limit is not None:
                out.sample("pairwise_rented_budget_usd", {"rented_node": name, "period": period}, float(limit))
    out.family("pairwise_rented_budget_reached", "gauge", "1 while a rented node is held out by its budget.")
    for name, _, _, reached in budgets:
        out.sample("pairwise_rented_budget_reached", {"rented_node": name}, 1 if reached else 0)


def _states_with(state: str) -> Iterable[str]:
    return RENTED_STATES if state in RENTED_STATES else (*RENTED_STATES, state)
