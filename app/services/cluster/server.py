"""The cluster port: paired peers only, over mutual TLS 1.3.

``TlsContexts.server`` refuses any client whose certificate is not pinned
during the handshake; ``pin_check_middleware`` checks the pin again on every
request (a keep-alive connection outlives a pin removal) and tells handlers
which peer is calling. Nothing a peer says about itself in headers decides
who it is.

    GET  /cluster/v1/facts        name, OS, hardware, engines (no URLs), models, load
    GET  /cluster/v1/inventory    models peers may route here, and load
    POST /cluster/v1/relay        serve a peer's request here, streaming (see relay.py)
    POST /cluster/v1/jobs/events  a batch of workload records from their origin
    POST /cluster/v1/unpair       the caller removed us: stop trusting it too
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web

from app.services.cluster.peer_client import API_PREFIX
from app.services.cluster.tls import PEER_PIN_KEY, TlsContexts, pin_check_middleware
from app.services.cluster.trust import PeerPin
from app.services.cluster.warm_pool import SERVER_KEEPALIVE_S
from app.services.errors import ConfigError
from app.services.frontdoor.body import BodyError, parse_json_object, read_body
from app.services.json_types import JsonArray, JsonObject
from app.services.listener_budget import BudgetedSite, cluster_budget
from app.services.platform.openfiles import open_file_limit
from app.settings import parse_host_port

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ClusterHandlers:
    """What the cluster port serves; the cluster service fills these in."""

    def __init__(self, *, facts: Callable[[], Mapping[str, object]], inventory: Callable[[], JsonObject],
                 relay: Handler, receive_jobs: Callable[[PeerPin, JsonArray], dict[str, int]],
                 unpair: Callable[[PeerPin], Awaitable[None]],
                 heard_from: Callable[[PeerPin, str | None, str | None], None]) -> None:
        self.facts, self.inventory, self.relay = facts, inventory, relay
        self.receive_jobs, self.unpair, self.heard_from = receive_jobs, unpair, heard_from


class ClusterServer:
    def __init__(self, contexts: TlsContexts, handlers: ClusterHandlers, *, max_body_bytes: int) -> None:
        self.contexts, self.handlers = contexts, handlers
        self.site: BudgetedSite | None = None
        self.max_body_bytes = max_body_bytes
        self.address = ""
        self.port = 0
        self._runner: web.AppRunner | None = None

    def build_app(self) -> web.Application:
        handlers = self.handlers

        @web.middleware
        async def heard(request: web.Request, handler: Handler) -> web.StreamResponse:
            # Runs after the pin check: any call from a pinned peer shows it is alive and where it is.
            handlers.heard_from(request[PEER_PIN_KEY], request.remote, request.headers.get("X-Pairwise-Cluster-Port"))
            return await handler(request)

        app = web.Application(middlewares=[pin_check_middleware(self.contexts), heard],
                              client_max_size=self.max_body_bytes + 65536)

        async def facts(request: web.Request) -> web.Response:
            return web.json_response(handlers.facts())

        async def inventory(request: web.Request) -> web.Response:
            return web.json_response(handlers.inventory())

        async def jobs(request: web.Request) -> web.Response:
            try:
                # Bounded: size, depth (deep JSON is refused before anything walks it), an object.
                data = parse_json_object(await read_body(request, self.max_body_bytes))
            except BodyError as exc:
                log.info("refused job events from %s: %s", request[PEER_PIN_KEY].name, exc.message)
                return web.json_response({"error": f"job events refused: {exc.message}"}, status=exc.status)
            records = data.get("jobs")
            if not isinstance(records, list):
                return web.json_response({"error": "job events need a 'jobs' list"}, status=400)
            return web.json_response(handlers.receive_jobs(request[PEER_PIN_KEY], records))

        async def unpair(request: web.Request) -> web.Response:
            pin = request[PEER_PIN_KEY]
            await handlers.unpair(pin)
            return web.json_response({"unpaired": pin.node_id})

        app.router.add_get(API_PREFIX + "/facts", facts)
        app.router.add_get(API_PREFIX + "/inventory", inventory)
        app.router.add_post(API_PREFIX + "/relay", handlers.relay)
        app.router.add_post(API_PREFIX + "/jobs/events", jobs)
        app.router.add_post(API_PREFIX + "/unpair", unpair)
        return app

    async def start(self, listen: str) -> str:
        """Bind the cluster port; returns the address actually bound ("host:port")."""
        host, port = parse_host_port(listen)
        # handler_cancellation: an origin that gives up closes its connection, and the
        # relayed request here is cancelled with it (its upstream closed, its job ended).
        # keepalive_timeout: an idle peer connection is kept this long here, longer than a peer's warm
        # pool keeps it (``warm_pool.client_keepalive_s``), so the peer always lets go first and never
        # sends a request onto a connection this side is closing.
        self._runner = web.AppRunner(self.build_app(), handler_cancellation=True, access_log=None,
                                     keepalive_timeout=SERVER_KEEPALIVE_S)
        await self._runner.setup()
        # Budgeted: connections per address and in total, and 5 s for a TLS handshake (a stranger
        # holding handshakes open must not use up the descriptors the front door needs).
        # Sized from the open-file limit in force now (the node raised it at start).
        budget = cluster_budget(open_file_limit())
        site = self.site = BudgetedSite(self._runner, host, port, budget, label="cluster port",
                                        ssl_context=self.contexts.server)
        # A pin gone voids the session tickets issued so far: new connections start on the new front.
        self.contexts.on_front_change(lambda front: setattr(site, "ssl_context", front))
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise ConfigError(f"cannot open the cluster port {listen}: {exc.strerror or exc}; "
                              "choose another with --cluster-listen HOST:PORT") from exc
        bound = self._runner.addresses[0]
        self.port = int(bound[1])
        shown = bound[0] if ":" not in bound[0] else f"[{bound[0]}]"
        self.address = f"{shown}:{self.port}"
        log.info("cluster port open on %s (mutual TLS, pinned peers only)", self.address)
        return self.address

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
