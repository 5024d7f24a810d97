"""Connection budgets for the node's listeners, so a stranger cannot take the node down.

Every connection a listener accepts costs a file descriptor, and the process has one table of
them: 1,100 idle connections to the LAN-facing cluster port used to leave the front door unable
to accept its local callers ("Too many open files"). So each listener gets a budget:

* **Cluster port** (TLS, LAN-facing): a connection still in its TLS handshake counts against a
  small per-address and total allowance and gets ``handshake_s`` to finish (a stranger cannot
  finish it: the server requires a pinned certificate); an established (pinned) connection counts
  against a larger per-address and total cap. Over budget, the connection is closed at once.
* **Front door** (loopback): a total cap; when it is full, the oldest *idle* connection (no request
  in progress) is closed to make room, so idle connections can never lock out a caller. aiohttp's
  keep-alive timer (``HEADER_TIMEOUT_S``) closes a connection that sends no complete request
  headers in time, and ``body_stall_s`` closes one whose request body stops arriving. A body that
  trickles (a byte every few seconds never stalls) is budgeted too: after ``body_grace_s`` it must
  keep up ``body_min_rate`` bytes per second, and it must be whole within ``body_deadline_s``; when
  the front door is full and nothing is idle, the slowest body in progress is closed for the new
  connection, so hundreds of trickling connections cannot lock out a local chat.

Budgets are sized from the soft limit on open files (raised to the hard limit at start,
``app.services.platform.openfiles``) so their sum stays well below it.

``BudgetedSite`` replaces aiohttp's ``TCPSite``: it accepts plain TCP, applies the budget with the
caller's address known, then upgrades to TLS itself (``loop.start_tls``) with a handshake deadline,
and hands the connection to aiohttp's request handler through a thin proxy protocol.
"""

from __future__ import annotations

import asyncio
import logging
import math
import ssl
from asyncio import sslproto
from collections import Counter
from dataclasses import dataclass
from typing import Any, cast

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from app.services.platform.sockets import reuse_address

log = logging.getLogger(__name__)

HEADER_TIMEOUT_S = 15.0  # aiohttp's keep-alive timer: headers of a new request, and idle keep-alive
SWEEP_EVERY_S = 1.0


@dataclass(frozen=True)
class Budget:
    total: int
    per_address: int | None = None  # None: no per-address cap (loopback listeners)
    handshake_total: int = 0  # TLS listeners: connections still in their handshake
    handshake_per_address: int = 0
    handshake_s: float = 5.0
    evict_idle: bool = False  # when full, close the oldest idle connection instead of the new one
    body_stall_s: float | None = None
    body_grace_s: float = 10.0  # a body's first seconds are not rated (a client may pause once)
    body_min_rate: float = 1024.0  # bytes per second, averaged since the body began
    body_deadline_s: float = 120.0  # a whole body, however fast it seemed
    # A connection whose TLS handshake verified the client's certificate (on the cluster port: a pinned
    # peer) leaves the per-address count: a paired peer holds one connection per stream it relays at
    # once, and only ``total`` caps those. Strangers never get past the handshake budget.
    verified_clients_exempt: bool = False


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def frontdoor_budget(open_files: int) -> Budget:
    return Budget(total=_clamp(open_files // 3, 64, 1024), evict_idle=True, body_stall_s=15.0)


def cluster_budget(open_files: int) -> Budget:
    # A paired peer opens a burst of connections when many requests start at once (one per
    # concurrent relay), so its address may have 32 handshakes in flight; a stranger holding them
    # open keeps each for 5 s at most, and all of them together stay within ``total``.
    return Budget(total=_clamp(open_files // 4, 32, 512), per_address=64,
                  handshake_total=_clamp(open_files // 8, 16, 256), handshake_per_address=32, handshake_s=5.0,
                  verified_clients_exempt=True)


class _Gate(asyncio.Protocol):
    """One accepted connection: admitted or refused, upgraded to TLS, then proxied to aiohttp."""

    def __init__(self, site: BudgetedSite) -> None:
        self.site = site
        self.loop = asyncio.get_running_loop()
        self.address = "?"
        self.transport: asyncio.Transport | None = None
        self.handler: RequestHandler | None = None
        self.handshaking = False
        self.admitted = False
        self.verified = False  # the TLS handshake verified the client's certificate
        self.last_data = self.loop.time()
        self.opened = self.last_data
        self.received = 0  # bytes from the client, all requests
        self.body_since: float | None = None  # when the body in progress was first seen arriving
        self.body_bytes0 = 0
        # Bytes that arrive between the end of the TLS handshake and the moment start_tls returns
        # (a client sends its request right after its Finished): kept for the handler, not lost.
        self.early: list[bytes] = []
        self.early_eof = False

    # -- asyncio.Protocol -------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.transport is not None:
            return  # the TLS transport reporting in; the handler gets it from _serve
        # A cast, not an isinstance check: uvloop's TCP transport is not an asyncio.Transport subclass.
        self.transport = transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if peer else "?"
        if not self.site.admit(self):
            transport.abort()
            return
        if self.site.ssl_context is None:
            self._serve(transport)
        else:
            transport.pause_reading()  # start_tls takes the bytes from here on
            task = asyncio.ensure_future(self._handshake(transport, self.site.ssl_context))
            self.site.tasks.add(task)
            task.add_done_callback(self.site.tasks.discard)

    def data_received(self, data: bytes) -> None:
        self.last_data = self.loop.time()
        self.received += len(data)
        if self.handler is not None:
            self.handler.data_received(data)
        else:
            self.early.append(data)

    def eof_received(self) -> None:
        if self.handler is not None:
            self.handler.eof_received()
        else:
            self.early_eof = True

    def connection_lost(self, exc: BaseException | None) -> None:
        self.site.release(self)
        if self.handler is not None:
            handler, self.handler = self.handler, None
            handler.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.handler is not None:
            self.handler.pause_writing()

    def resume_writing(self) -> None:
        if self.handler is not None:
            self.handler.resume_writing()

    # -- steps ------------------------------------------------------------------------------------------
    async def _handshake(self, raw: asyncio.Transport, context: ssl.SSLContext) -> None:
        try:
            tls = await self._start_tls(raw, context)
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError) as exc:
            log.debug("TLS handshake from %s failed: %r", self.address, exc)
            self.site.release(self)
            return
        finally:
            self.site.handshake_done(self)
        if tls is None or tls.is_closing():
            self.site.release(self)
            return
        if tls.get_extra_info("peercert"):
            self.site.client_verified(self)
        self.transport = tls
        self._serve(tls)

    async def _start_tls(self, raw: asyncio.Transport, context: ssl.SSLContext) -> asyncio.Transport | None:
        """``loop.start_tls``, unless bytes reached us before it began: uvloop reads a ClientHello
        that came with the accept although connection_made paused reading, and its start_tls
        cannot be given them. Then the same steps as asyncio's start_tls, with those bytes first."""
        early, self.early = self.early, []
        if not early:
            return await self.loop.start_tls(raw, self, context, server_side=True,
                                             ssl_handshake_timeout=self.site.budget.handshake_s)
        waiter = self.loop.create_future()
        tls = sslproto.SSLProtocol(self.loop, self, context, waiter, server_side=True, call_connection_made=False,
                                   ssl_handshake_timeout=math.ceil(self.site.budget.handshake_s))
        raw.pause_reading()
        raw.set_protocol(tls)
        tls.connection_made(raw)
        for data in early:
            view = memoryview(data)
            while view:
                buffer = tls.get_buffer(len(view))
                size = min(len(buffer), len(view))
                buffer[:size] = view[:size]
                tls.buffer_updated(size)
                view = view[size:]
        raw.resume_reading()
        await waiter
        return tls._app_transport

    def _serve(self, transport: asyncio.Transport) -> None:
        server = self.site.runner.server
        assert server is not None
        handler = self.handler = server()
        handler.connection_made(transport)
        early, self.early = self.early, []
        for data in early:
            handler.data_received(data)
        if self.early_eof:
            handler.eof_received()

    # -- state the budget reads ---------------------------------------------------------------------------
    def idle(self) -> bool:
        """No request in progress or queued (aiohttp's own flags; covered by the front door tests)."""
        handler = self.handler
        return handler is None or (not handler._request_in_progress and not handler._messages)

    def body_in_progress(self) -> bool:
        handler = self.handler
        request = handler._current_request if handler is not None else None
        return request is not None and not request.content.is_eof()

    def body_stalled(self, now: float, stall_s: float) -> bool:
        return self.body_in_progress() and now - self.last_data > stall_s

    def body_rate(self, now: float) -> float | None:
        """Bytes per second of the body in progress since it was first seen (None: no body arriving).
        Called by the sweep every second, which is what starts a body's clock."""
        if not self.body_in_progress():
            self.body_since = None
            return None
        if self.body_since is None:
            self.body_since, self.body_bytes0 = now, self.received
            return math.inf
        elapsed = now - self.body_since
        return (self.received - self.body_bytes0) / elapsed if elapsed > 0 else math.inf

    def body_too_slow(self, now: float, budget: Budget) -> str | None:
        rate = self.body_rate(now)
        if rate is None or self.body_since is None:
            return None
        elapsed = now - self.body_since
        if elapsed > budget.body_deadline_s:
            return f"was not whole within {budget.body_deadline_s:g} s"
        if elapsed > budget.body_grace_s and rate < budget.body_min_rate:
            return f"arrived at {rate:.0f} bytes/s, under the {budget.body_min_rate:g} bytes/s minimum"
        return None

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class BudgetedSite(web.BaseSite):
    """aiohttp site on host:port whose connections are budgeted (and TLS-upgraded here)."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, budget: Budget, *, label: str,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=256)
        self.runner = runner
        self.host, self.port, self.budget, self.label = host, port, budget, label
        self.ssl_context: ssl.SSLContext | None = ssl_context
        self.connections: dict[_Gate, None] = {}  # admitted, oldest first
        self.per_address: Counter[str] = Counter()
        self.handshakes: Counter[str] = Counter()
        self.seen = 0  # connections accepted from the OS, admitted or not
        self.refused = 0
        self.evicted = 0
        self.slow_closed = 0  # bodies closed for stalling, trickling or running past their deadline
        self.tasks: set[asyncio.Future[Any]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self.bound: tuple[str, int] | None = None

    @property
    def name(self) -> str:
        return f"{self.label} on {self.host}:{self.port}"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Gate(self), self.host, self.port,
                                                backlog=256, reuse_address=reuse_address())
        sockname = self._server.sockets[0].getsockname()
        self.bound = (str(sockname[0]), int(sockname[1]))
        if self.budget.body_stall_s is not None:
            self._sweeper = asyncio.create_task(self._sweep(self.budget.body_stall_s), name=f"{self.label}-sweep")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for task in list(self.tasks):
            task.cancel()
        for gate in [g for g in self.connections if g.handler is None]:
            gate.close()  # still in the handshake: aiohttp's shutdown does not know these
        await super().stop()

    # -- the budget ---------------------------------------------------------------------------------------
    def admit(self, gate: _Gate) -> bool:
        budget, address = self.budget, gate.address
        self.seen += 1
        if len(self.connections) >= budget.total and budget.evict_idle:
            # Room for the new caller: the oldest idle connection, else the slowest body arriving.
            victim = next((g for g in self.connections if g.idle()), None) or self._slowest_body()
            if victim is not None:
                self.evicted += 1
                self.release(victim)
                victim.close()
        over = (len(self.connections) >= budget.total
                or (budget.per_address is not None and self.per_address[address] >= budget.per_address))
        if self.ssl_context is not None:
            over = over or (sum(self.handshakes.values()) >= budget.handshake_total
                            or self.handshakes[address] >= budget.handshake_per_address)
        if over:
            self.refused += 1
            if self.refused in (1, 10, 100) or self.refused % 1000 == 0:
                log.warning("%s: refused a connection from %s (over its connection budget; %d refused so far)",
                            self.label, address, self.refused)
            return False
        gate.admitted = True
        self.connections[gate] = None
        self.per_address[address] += 1
        if self.ssl_context is not None:
            gate.handshaking = True
            self.handshakes[address] += 1
        return True

    def _slowest_body(self) -> _Gate | None:
        now = asyncio.get_running_loop().time()
        rated = [(rate, gate) for gate in self.connections
                 if (rate := gate.body_rate(now)) is not None and gate.body_since is not None]
        return min(rated, key=lambda pair: (pair[0], pair[1].body_since or now))[1] if rated else None

    def handshake_done(self, gate: _Gate) -> None:
        if gate.handshaking:
            gate.handshaking = False
            self._decrement(self.handshakes, gate.address)

    def client_verified(self, gate: _Gate) -> None:
        if self.budget.verified_clients_exempt and gate.admitted and not gate.verified:
            gate.verified = True
            self._decrement(self.per_address, gate.address)

    def release(self, gate: _Gate) -> None:
        self.handshake_done(gate)
        if gate.admitted:
            gate.admitted = False
            self.connections.pop(gate, None)
            if not gate.verified:
                self._decrement(self.per_address, gate.address)

    @staticmethod
    def _decrement(counter: Counter[str], key: str) -> None:
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]

    async def _sweep(self, stall_s: float) -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY_S)
            now = asyncio.get_running_loop().time()
            slow = 0
            for gate in list(self.connections):
                if gate.body_stalled(now, stall_s):
                    log.info("%s: closed a connection from %s whose request body stopped arriving", self.label,
                             gate.address)
                elif (why := gate.body_too_slow(now, self.budget)) is not None:
                    slow += 1
                    if slow == 1:  # one line per sweep, not one per trickling connection
                        log.info("%s: closed a connection from %s whose request body %s", self.label,
                                 gate.address, why)
                else:
                    continue
                self.slow_closed += 1
                self.release(gate)
                gate.close()

    def stats(self) -> dict[str, int]:
        return {"seen": self.seen, "open": len(self.connections), "handshaking": sum(self.handshakes.values()),
                "refused": self.refused, "evicted": self.evicted, "slow_bodies_closed": self.slow_closed}
