"""The composition root: builds a node's services, starts them, stops them in order.

Runs on any asyncio loop: plain asyncio under ``pairwise serve``, qasync under
the tray. Stopping runs the "first" hooks (pause-on-exit) before anything else,
so a rented GPU is paused while the network and the loop are still there.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from logging.handlers import RotatingFileHandler
from typing import TYPE_CHECKING, Any

from aiohttp import typedefs, web

from app.home import Home, write_private
from app.services.backends.engines import EngineManager
from app.services.cluster.identity import NodeIdentity
from app.services.errors import ConfigError, FeatureMissing
from app.services.events import EventBus, NodeStarted, NodeStopped
from app.services.firstrun.adopt import keep_ollama_promise
from app.services.firstrun.explain import FRONT_DOOR
from app.services.firstrun.ports import explain_taken, preflight
from app.services.frontdoor.control import ControlRoute
from app.services.guard import FailureNotices, guarded
from app.services.inference import InferenceService
from app.services.jobs.store import JobStore
from app.services.jobs.tracker import JobTracker
from app.services.listener_budget import HEADER_TIMEOUT_S, BudgetedSite, frontdoor_budget
from app.services.outbound import ca_files
from app.services.platform.hardware import HardwareFacts, hardware_summary, os_description
from app.services.platform.lock import InstanceLock
from app.services.platform.openfiles import open_file_limit, raise_open_file_limit
from app.services.platform.sockets import address_in_use
from app.services.routing.names import ModelNames
from app.services.routing.registry import UpstreamRegistry
from app.services.secrets import RedactingFilter, SecretStore
from app.settings import NodeSettings, SettingsStore, parse_host_port

if TYPE_CHECKING:
    from app.services.api.rows import LocalNodeRow, NodeRow, RentedFact
    from app.services.api.snapshots import NodeStatus
    from app.services.batch.service import BatchService
    from app.services.cluster.service import ClusterService
    from app.services.keys.service import RequesterService
    from app.services.metrics.book import MetricsBook
    from app.services.rented.manager import RentedManager

log = logging.getLogger(__name__)

StopHook = Callable[[], Awaitable[None]]
DoorCheck = typedefs.Middleware


class NodeAlreadyRunning(ConfigError):
    title = "Already running"


class Node:
    """A node's core services, and its features as typed optional fields.

    The features (``rented``, ``cluster``, ``requesters``, ``batches``, ``metrics``) are filled by
    ``bootstrap.build_node``; a node built without one (a test's bare node) has None there,
    and whoever needs a feature says so by name (``app.services.api`` raises ``FeatureMissing``).
    """

    def __init__(self, home: Home, *, listen: str | None = None, cluster_listen: str | None = None,
                 name: str | None = None, mdns: bool | None = None) -> None:
        self.home = home
        home.ensure()
        self.repaired_permissions = home.make_private()  # or refuses, naming the file that is too open
        self.settings_store = SettingsStore(home.settings_file)
        self.settings: NodeSettings = self.settings_store.load()
        changed = False
        for field, value in (("listen", listen), ("cluster_listen", cluster_listen), ("name", name)):
            if value is not None and getattr(self.settings, field) != value:
                setattr(self.settings, field, value)
                changed = True
        if mdns is not None:
            self.settings.mdns = mdns
        if changed or not home.settings_file.exists():
            self.settings_store.save(self.settings)
        self.identity = NodeIdentity.load_or_create(home.identity_dir, self.settings.name)
        self.name, self.node_id = self.settings.name, self.identity.node_id
        self.bus = EventBus()
        self.secrets = SecretStore(self.node_id)
        self.jobs = JobStore(home.database)
        self.tracker = JobTracker(self.jobs, self.bus, self.name, self.node_id)
        self.registry = UpstreamRegistry(ModelNames(self.settings, self.settings_store))
        self.extra_ca = ca_files(self.settings.ca_file)
        self.engines = EngineManager(self.settings, self.settings_store, self.secrets, self.registry, self.bus,
                                     self.name, self.node_id, self.extra_ca)
        self.inference = InferenceService(self.registry, self.tracker, self.name, self.node_id, self.refresh_stale)
        # Features, filled by bootstrap.build_node.
        # Rented nodes; every provider's own services are in its provider registry (``rented.providers``).
        self.rented: RentedManager | None = None
        self.cluster: ClusterService | None = None
        self.requesters: RequesterService | None = None  # keys, per-requester limits, the LAN door
        self.batches: BatchService | None = None  # the OpenAI Files and Batch APIs
        self.metrics: MetricsBook | None = None  # what GET /metrics counts (None: PAIRWISE_METRICS=off)
        # The front door's aiohttp app, made when it opens (bootstrap.build_node gives it: the door's
        # modules read the node through a Protocol, and the node does not import them).
        self.frontdoor_app: Callable[[], web.Application] | None = None
        self.extra_control_routes: list[ControlRoute] = []
        self.extra_door_routes: list[ControlRoute] = []  # a feature's API routes at the loopback door (/v1/batches)
        # Checks the loopback front door runs after its loopback rule (the keys feature's optional key).
        self.door_checks: list[DoorCheck] = []
        self.stop_first: list[tuple[str, StopHook]] = []
        self.stop_last: list[StopHook] = []
        # How long each stop_first step may take; a feature that must keep trying longer (pause on
        # exit of a billing GPU) raises it.
        self.stop_first_timeout_s = 20.0
        self.start_hooks: list[StopHook] = []
        self.fact_providers: list[Callable[[], Sequence[NodeRow]]] = []
        self.shared_fact_providers: list[Callable[[], Sequence[RentedFact]]] = []  # rows peers may see
        # Peers' rented nodes only (the cluster's), read by the registry on every request: not the
        # fact_providers' full rows, whose every peer row lists all its models.
        self.peer_rented_providers: list[Callable[[], Sequence[NodeRow]]] = []
        # Filled by a probe that may take a moment (nvidia-smi); until then, what the OS tells at once.
        self.hardware: HardwareFacts | None = None
        self.frontdoor_address = ""
        self.frontdoor_site: BudgetedSite | None = None
        self.listener_sites: list[BudgetedSite] = []  # every budgeted listener, for status
        self.open_files = open_file_limit()
        self.started_at = 0.0
        self._runner: web.AppRunner | None = None
        self._lock = InstanceLock(home.lock_file)
        self._stopped = asyncio.Event()

    # -- lifecycle -------------------------------------------------------------------------------------------

    def _take_lock(self) -> None:
        if not self._lock.try_acquire():
            raise NodeAlreadyRunning(f"a node is already running with home {self.home.root}")

    def _setup_logging(self) -> None:
        if not self.home.log_file.exists():
            os.close(os.open(self.home.log_file, os.O_CREAT | os.O_WRONLY, 0o600))  # owner-only from the start
        handler = RotatingFileHandler(self.home.log_file, maxBytes=2_000_000, backupCount=3,
                                      encoding="utf-8")  # whatever the code page
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.addFilter(RedactingFilter())
        root = logging.getLogger()
        root.addHandler(handler)
        if root.level > logging.INFO or root.level == logging.NOTSET:
            root.setLevel(logging.INFO)
        # httpx logs every request URL at INFO; URLs of rented endpoints are not for the log.
        logging.getLogger("httpx").setLevel(logging.WARNING)

    async def start(self, *, frontdoor: bool = True) -> None:
        """Start everything; the front door last. Its address (and the cluster port's) is checked
        first, so a taken one ends here with PortTaken naming the holder, before anything started.

        ``frontdoor=False`` starts the rest only: the tray does that while another program holds the
        front door, and calls ``open_frontdoor`` once the address is free.
        """
        self._take_lock()
        try:
            await preflight(self.settings, self.home, frontdoor=frontdoor, cluster=self.cluster is not None)
        except BaseException:
            self._lock.release()
            raise
        self._setup_logging()
        self.open_files = raise_open_file_limit()
        for repaired in self.repaired_permissions:
            log.warning("made private (it was readable by other users): %s", repaired)
        interrupted = self.jobs.mark_interrupted(self.node_id, "the node stopped while this job was running")
        if interrupted:
            log.info("marked %d interrupted jobs as failed", interrupted)
        await self.engines.start()
        for hook in self.start_hooks:
            await hook()
        self.started_at = time.time()
        if frontdoor:
            await self.open_frontdoor()

    async def open_frontdoor(self) -> None:
        """Bind the front door. PortTaken (naming the holder) when another program has its address."""
        if self._runner is None:
            if self.frontdoor_app is None:
                raise FeatureMissing("this node was built without a front door (bootstrap.build_node gives it one)")
            self._runner = web.AppRunner(self.frontdoor_app(), handler_cancellation=True, access_log=None,
                                         keepalive_timeout=HEADER_TIMEOUT_S)
            await self._runner.setup()
        host, port = parse_host_port(self.settings.listen)
        site = BudgetedSite(self._runner, host, port, frontdoor_budget(self.open_files), label="front door")
        try:
            await site.start()
        except OSError as exc:
            await site.stop()  # a site that never bound leaves the runner, so a later try can add another
            if address_in_use(exc):
                raise await explain_taken(FRONT_DOOR, self.settings.listen, self.home) from exc
            raise
        self.frontdoor_site = site
        self.listener_sites.insert(0, site)
        bound = site.bound or (host, port)
        self.frontdoor_address = f"{bound[0]}:{bound[1]}"
        self.write_runtime()
        log.info("node %s (%s) serving on %s", self.name, self.node_id, self.frontdoor_address)
        self.bus.publish(NodeStarted(node=self.name, address=self.frontdoor_address))
        adopted = await keep_ollama_promise(self.home, self.engines)
        if adopted is not None:
            log.info("adopted Ollama at %s, where it was asked to move", adopted.get("url"))

    @property
    def frontdoor_open(self) -> bool:
        return self.frontdoor_site is not None

    def write_runtime(self, **extra: Any) -> None:
        runtime = {"pid": os.getpid(), "listen": self.frontdoor_address, "node_id": self.node_id,
                   "name": self.name, "started_at": self.started_at}
        if self.home.runtime_file.exists():
            try:
                previous = json.loads(self.home.runtime_file.read_text(encoding="utf-8"))
                if previous.get("pid") == os.getpid():
                    runtime = {**previous, **runtime}
            except ValueError:
                pass
        runtime.update(extra)
        write_private(self.home.runtime_file, json.dumps(runtime).encode())

    async def stop(self, *, timeout_s: float | None = None, progress: Callable[[str], None] | None = None) -> None:
        """Stop in order; ``progress(label)`` is told before each first step (the tray's quit dialog)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        # A failed step must not keep the others from running; a failed first step (pause on exit)
        # may leave a GPU billing, so it is told, not only logged.
        tell = FailureNotices(self.bus.publish, self.name)
        for label, hook in self.stop_first:
            log.info("stop step: %s", label)  # the Windows lane reads that pause on exit was reached
            if progress is not None:
                progress(label)
            with guarded(f"stop step {label}", log, tell):
                await asyncio.wait_for(hook(), timeout=timeout_s or self.stop_first_timeout_s)
        if self._runner:
            await self._runner.cleanup()
        for last in self.stop_last:
            with guarded(f"stop step {getattr(last, '__qualname__', 'last')}", log):
                await asyncio.wait_for(last(), timeout=5)
        await self.engines.stop()
        self.jobs.close()
        self.home.runtime_file.unlink(missing_ok=True)
        self._lock.release()
        self.bus.publish(NodeStopped(node=self.name))

    @property
    def stopping(self) -> asyncio.Event:
        """Set when the node begins to stop; long-lived handlers (event streams) end on it."""
        return self._stopped

    async def refresh_stale(self) -> None:
        await self.engines.refresh_stale()

    # -- facts -----------------------------------------------------------------------------------------------

    def local_facts(self) -> LocalNodeRow:
        models = sorted({m.name for e in self.engines.upstreams.values() for m in e.models()})
        return {
            "id": self.node_id, "name": self.name, "kind": "local", "online": True,
            "os": os_description(), "engines": self.engines.describe(),
            "models": models, "in_flight": sum(e.in_flight for e in self.engines.upstreams.values()),
            "hardware": self.hardware or hardware_summary(),
        }

    def nodes(self) -> list[NodeRow]:
        found: list[NodeRow] = [self.local_facts()]
        for provider in self.fact_providers:
            found.extend(provider())
        return found

    def status(self) -> NodeStatus:
        return {
            "name": self.name, "id": self.node_id, "listen": self.frontdoor_address, "pid": os.getpid(),
            "uptime_s": round(time.time() - self.started_at, 1), "home": str(self.home.root),
            "engines": len(self.engines.upstreams), "models": len(self.registry.inventory()),
            "active_jobs": len(self.jobs.list(active_only=True, limit=1000)),
            "open_files_limit": self.open_files,
            "connections": {site.label: site.stats() for site in self.listener_sites},
        }

