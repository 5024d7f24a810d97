"""Endpoint records and their life: pending → initializing → running, pause, scale to zero, wake.

Transitions are evaluated lazily from monotonic timestamps (`advance`), each at the exact instant it
was due (since + duration), so billing stretches are exact however rarely anyone looks. Durations
come from the live settings: pending_s, initializing_s (also used for `updating`), and
scaleToZeroTimeout × minute_s of inactivity for endpoints with minReplica 0.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.simulator.hardware import Hardware
from app.simulator.httputil import endpoint_id, hex_id, now_iso
from app.simulator.ledger import Ledger, Meter
from app.simulator.settings import SimSettings
from app.tinymodel import RunningTiny

BILLABLE = ("initializing", "running")
# States whose replicas hold quota; paused (and failed, which has none) do not (hf-api.md §1.6).
QUOTA_FREE = ("paused", "failed")
DEFAULT_SCALE_TO_ZERO_MIN = 60  # HF's default idle time when minReplica is 0 and no timeout is set

MESSAGES = {
    "pending": "Endpoint waiting to be scheduled",
    "initializing": "Endpoint is initializing",
    "updating": "Endpoint waiting for the update",
    "running": "Endpoint is ready",
    "paused": "Endpoint is paused",
    "scaledToZero": "Endpoint is scaled to zero",
    "failed": "Endpoint failed to deploy",
    "updateFailed": "Endpoint failed to update",
}


@dataclass
class Endpoint:
    namespace: str
    name: str
    id: str
    config: dict[str, Any]  # type, provider, compute, model, route, tags, cacheHttpResponses, accountId
    state: str
    since: float
    created_by: dict[str, str]
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)
    message: str = MESSAGES["pending"]
    url_assigned: bool = False
    last_activity: float = 0.0
    requests: int = 0
    health_requests: int = 0
    tiny: RunningTiny | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def repository(self) -> str:
        return str(self.config["model"]["repository"])

    @property
    def compute(self) -> dict[str, Any]:
        return self.config["compute"]  # type: ignore[no-any-return]

    def scale_to_zero_after_min(self) -> float | None:
        scaling = self.compute.get("scaling", {})
        if scaling.get("minReplica", 1) != 0:
            return None
        timeout = scaling.get("scaleToZeroTimeout")
        return float(timeout) if timeout else float(DEFAULT_SCALE_TO_ZERO_MIN)


class EndpointBook:
    def __init__(self, settings: SimSettings, ledger: Ledger, hardware: Hardware, clock: Callable[[], float]) -> None:
        self.settings = settings
        self.ledger = ledger
        self.hardware = hardware
        self.clock = clock
        self.base_url = ""
        self._by_key: dict[tuple[str, str], Endpoint] = {}
        self._by_id: dict[str, Endpoint] = {}

    # --- lookup -------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> Endpoint | None:
        ep = self._by_key.get((namespace, name))
        if ep is not None:
            self.advance(ep)
        return ep

    def by_id(self, eid: str) -> Endpoint | None:
        ep = self._by_id.get(eid)
        if ep is not None:
            self.advance(ep)
        return ep

    def in_namespace(self, namespace: str) -> list[Endpoint]:
        eps = [ep for (ns, _), ep in self._by_key.items() if ns == namespace]
        for ep in eps:
            self.advance(ep)
        return eps

    def all(self) -> list[Endpoint]:
        return list(self._by_key.values())

    # --- lifecycle ----------------------------------------------------------------------------
    def add(self, namespace: str, name: str, config: dict[str, Any], created_by: dict[str, str]) -> Endpoint:
        now = self.clock()
        ep = Endpoint(namespace=namespace, name=name, id=endpoint_id(), config=config, state="pending",
                      since=now, created_by=created_by, last_activity=now)
        self._by_key[(namespace, name)] = ep
        self._by_id[ep.id] = ep
        self.ledger.meter(self.ledger.endpoints, ep.key, self.price(ep))
        return ep

    def remove(self, ep: Endpoint) -> None:
        self.advance(ep)
        self._meter(ep).close(self.clock())
        self._by_key.pop((ep.namespace, ep.name), None)
        self._by_id.pop(ep.id, None)

    def price(self, ep: Endpoint) -> float:
        provider, compute = ep.config["provider"], ep.compute
        row = self.hardware.find(provider["vendor"], provider["region"], compute["instanceType"],
                                 compute["instanceSize"])
        if row is not None and row["pricePerHour"] is not None:
            return float(row["pricePerHour"])
        # Unpriced (or unknown) compute: it goes on billing at the last price charged.
        meter = self.ledger.endpoints.get(ep.key)
        return meter.price_per_hour if meter is not None else 0.0

    def accelerators(self, ep: Endpoint) -> int:
        provider, compute = ep.config["provider"], ep.compute
        row = self.hardware.find(provider["vendor"], provider["region"], compute["instanceType"],
                                 compute["instanceSize"])
        per_replica = int(row["numAccelerators"]) if row else 1
        return per_replica * int(compute.get("scaling", {}).get("maxReplica", 1) or 1)

    def used_accelerators(self, namespace: str, instance_type: str, exclude: Endpoint | None = None) -> int:
        return sum(self.accelerators(ep) for ep in self.in_namespace(namespace)
                   if ep is not exclude and ep.state not in QUOTA_FREE
                   and ep.compute["instanceType"] == instance_type)

    def quota_error(self, namespace: str, instance_type: str, needed: int, exclude: Endpoint | None) -> str | None:
        limit = self.hardware.max_accelerators(instance_type)
        used = self.used_accelerators(namespace, instance_type, exclude)
        if used + needed > limit:
            return (f"Quota exceeded for {instance_type} in namespace {namespace}: "
                    f"{needed} accelerator(s) requested, {max(0, limit - used)} of {limit} available")
        return None

    def _meter(self, ep: Endpoint) -> Meter:
        return self.ledger.meter(self.ledger.endpoints, ep.key, self.price(ep))

    def set_state(self, ep: Endpoint, state: str, at: float | None = None, message: str | None = None) -> None:
        at = self.clock() if at is None else at
        meter = self._meter(ep)
        if state in BILLABLE:
            meter.open(state, at, self.price(ep))
        else:
            meter.close(at)
        ep.state, ep.since = state, at
        ep.message = message or MESSAGES.get(state, "")
        ep.updated_at = now_iso()
        if state == "initializing":
            ep.url_assigned = True
        if state == "running":
            ep.last_activity = at  # the idle timer starts when the replica is up

    def resume(self, ep: Endpoint) -> str | None:
        """Resume as any client would (the API, HF's UI, a second machine); HF's error message or None."""
        if ep.state in ("running", "updating"):
            return f"Endpoint {ep.name} is already running"
        if ep.state in ("paused", "failed", "updateFailed"):
            error = self.quota_error(ep.namespace, ep.compute["instanceType"], self.accelerators(ep), ep)
            if error:
                return error
            self.set_state(ep, "pending")
        elif ep.state == "scaledToZero":
            self.set_state(ep, "initializing")
        return None

    def reprice(self, ep: Endpoint) -> None:
        """The compute's price or the endpoint's compute changed: bill from now at the new price (the
        billing period goes on; minutes that start from now are charged at the new price)."""
        self.advance(ep)
        meter, price = self._meter(ep), self.price(ep)
        if meter.price_per_hour == price:
            return
        if ep.state in BILLABLE:
            meter.open(ep.state, self.clock(), price)
        else:
            meter.price_per_hour = price

    def reprice_all(self) -> None:
        for ep in self.all():
            self.reprice(ep)

    def advance(self, ep: Endpoint) -> None:
        now, s = self.clock(), self.settings
        while True:
            if ep.state == "pending" and now >= ep.since + s.pending_s:
                self.set_state(ep, "initializing", ep.since + s.pending_s)
            elif ep.state in ("initializing", "updating") and now >= ep.since + s.initializing_s:
                self.set_state(ep, "running", ep.since + s.initializing_s)
            elif ep.state == "running" and (idle := ep.scale_to_zero_after_min()) is not None \
                    and now >= ep.last_activity + idle * s.minute_s:
                self.set_state(ep, "scaledToZero", ep.last_activity + idle * s.minute_s)
            else:
                return

    def next_change_in(self, ep: Endpoint) -> float | None:
        """Seconds until the next scheduled transition toward running, for waiters."""
        s = self.settings
        due = {"pending": s.pending_s, "initializing": s.initializing_s, "updating": s.initializing_s}.get(ep.state)
        return None if due is None else max(0.0, ep.since + due - self.clock())

    def touch(self, ep: Endpoint) -> None:
        ep.last_activity = max(ep.last_activity, self.clock())

    # --- wire shape ---------------------------------------------------------------------------
    def to_json(self, ep: Endpoint) -> dict[str, Any]:
        cfg = copy.deepcopy(ep.config)
        compute, model = cfg["compute"], cfg["model"]
        compute["id"] = f"{cfg['provider']['vendor']}-{cfg['provider']['region']}-" \
                        f"{compute['instanceType']}-{compute['instanceSize']}"
        model["secrets"] = {k: "******" for k in model.get("secrets", {})}  # never echo secret values
        if model.get("revision") is None:
            model["revision"] = hashlib.sha1(ep.repository.encode()).hexdigest()
        running = ep.state in ("running", "updating")
        status: dict[str, Any] = {
            "createdAt": ep.created_at, "createdBy": ep.created_by, "updatedAt": ep.updated_at,
            "updatedBy": ep.created_by, "private": None, "state": ep.state, "message": ep.message,
            "readyReplica": 1 if running else 0,
            "targetReplica": 0 if ep.state in ("paused", "scaledToZero", "failed") else 1,
        }
        if ep.url_assigned:
            status["url"] = f"{self.base_url}/endpoints/{ep.id}"
        if ep.state in ("failed", "updateFailed"):
            status["errorMessage"] = ep.message
        return {"name": ep.name, "type": cfg.pop("type"), "accountId": cfg.pop("accountId", None),
                "healthRoute": "/health", **cfg, "status": status}


def creator(user: str) -> dict[str, str]:
    return {"id": hex_id(f"user:{user}"), "name": user}
