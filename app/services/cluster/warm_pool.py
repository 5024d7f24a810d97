"""Warm relay connections to one paired peer, sized to how many streams we recently relayed there.

Each relayed stream holds one HTTP/1.1 connection to the peer's cluster port, and a new one costs a
mutual-TLS handshake on both event loops. So the relay keeps, per peer:

* **Demand**: the peak of relayed streams in flight over the last ``CLIENT_KEEPALIVE_S``, bucketed
  (``Demand``); the pool's target is that peak, at least ``WARM_MIN`` while the peer is online and at
  most ``WARM_MAX``.
* **Spares opened ahead**: at peer-up and after a burst (each poll of the peer calls ``maintain``),
  connections missing from the target are opened in the background, paced like any other
  (``RELAY_OPENING_PER_PEER`` at once, under the peer's handshake budget), resuming the TLS session.
* **Reaping**: an idle connection is closed after ``client_keepalive_s``, which is shorter than the
  time the peer's server keeps one (``SERVER_KEEPALIVE_S``, told in its load facts as ``keepalive_s``;
  aiohttp's oldest default when it says nothing), so we always let go first and never send a request
  onto a connection the peer is closing; idle connections above the target are closed at each poll.
* **Trust**: every connection, full handshake or resumed, carries a request only after its peer
  certificate was checked against the pin (``tls_sessions.check_pin``); one that fails is closed and
  the cached session forgotten. ``drop`` (unpaired, re-pinned) closes every connection at once and
  disables the session cache for good.

The policy is kept here; the connections are held by one or two sets (``WarmConnections``) it drives:
aiohttp's connector with these hooks (``WarmConnector``, used by the data plane's ``StreamClient``)
for whole answers and translated streams, and the splice's client (``warm_splice.WarmSplice``) for
pass-through streams, unless ``PAIRWISE_SPLICE=off``. Spares go to the set streams are relayed on;
both are trimmed, reaped, checked and dropped alike, and share the counts and the session cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Protocol

import aiohttp
from yarl import URL

from app.services.backends.stream_client import _PacedConnector
from app.services.cluster.tls_sessions import ResumingContext, check_pin

if TYPE_CHECKING:
    from app.services.api.snapshots import RelayPoolRow

log = logging.getLogger(__name__)

# How long the cluster port keeps an idle peer connection, and how long a peer's pool keeps one.
SERVER_KEEPALIVE_S = 300.0
CLIENT_KEEPALIVE_S = 240.0
# A peer that does not tell its keep-alive: the shortest aiohttp's server has defaulted to.
UNTOLD_SERVER_KEEPALIVE_S = 75.0
KEEPALIVE_MARGIN_S = 15.0
WARM_MIN = 2  # kept while the peer is online: the first request after a quiet spell is not a handshake
WARM_MAX = 256  # a peer's pool never holds more idle (the peer's cluster port admits 512 in all)
BUCKET_S = 10.0
SPARE_CONNECT_TIMEOUT_S = 10.0
CUT_SETTLE_STEPS = 200  # of 5 ms: a second at most


def client_keepalive_s(server_keepalive_s: float | None) -> float:
    """How long we keep an idle connection, given how long the peer's server keeps it."""
    server = server_keepalive_s if server_keepalive_s and server_keepalive_s > 0 else UNTOLD_SERVER_KEEPALIVE_S
    return max(1.0, min(CLIENT_KEEPALIVE_S, server - max(KEEPALIVE_MARGIN_S, server / 5)))


class Demand:
    """Relayed streams in flight now, and their peak over the last ``window_s`` (buckets of 10 s)."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.in_flight = 0
        self._peaks: deque[list[float]] = deque()  # [bucket start, peak in it]

    def enter(self) -> None:
        self.in_flight += 1
        now = time.monotonic()
        if not self._peaks or now - self._peaks[-1][0] >= BUCKET_S:
            self._peaks.append([now, float(self.in_flight)])
        elif self.in_flight > self._peaks[-1][1]:
            self._peaks[-1][1] = float(self.in_flight)

    def leave(self) -> None:
        self.in_flight = max(0, self.in_flight - 1)

    def peak(self) -> int:
        horizon = time.monotonic() - self.window_s
        while self._peaks and self._peaks[0][0] + BUCKET_S < horizon:
            self._peaks.popleft()
        return max([self.in_flight, *(int(p[1]) for p in self._peaks)])


class WarmConnections(Protocol):
    """One set of a peer's relay connections, as the pool's policy drives it."""

    @property
    def closed(self) -> bool: ...

    def counts(self) -> tuple[int, int]: ...

    def trim(self, keep: int) -> int: ...

    def cut_all(self) -> None: ...

    def cut_settled(self) -> bool: ...

    def set_keepalive(self, seconds: float) -> None: ...

    async def open_spare(self, url: str, server_hostname: str) -> None: ...


class WarmConnector(_PacedConnector):
    """aiohttp's connector, paced, whose every connection is checked against the pin before use,
    whose sessions feed the peer's ``SessionCache``, and that can open spare connections."""

    def __init__(self, pool: WarmPool, **kwargs: Any) -> None:
        if kwargs.setdefault("ssl", pool.context) is not pool.context:
            raise ValueError("a peer's warm pool connects with its own resuming context only")
        super().__init__(keepalive_timeout=pool.keepalive_s, **kwargs)
        self._pool = pool

    async def _create_connection(self, req: Any, traces: Any, timeout: Any) -> Any:  # noqa: ASYNC109 - aiohttp's own signature
        pool = self._pool
        if pool.dropped:
            raise aiohttp.ClientConnectionError(f"{pool.label} is no longer paired")
        try:
            proto = await super()._create_connection(req, traces, timeout)
        except aiohttp.ClientSSLError:
            pool.context.sessions.clear()  # whatever answers there now did not take our session
            raise
        transport = proto.transport
        if not pool.admit(transport.get_extra_info("ssl_object") if transport is not None else None):
            proto.close()
            raise aiohttp.ClientConnectorCertificateError(
                req.connection_key, ssl.SSLCertVerificationError(f"{pool.label} did not show its pinned certificate"))
        return proto

    def _release(self, key: Any, protocol: Any, *, should_close: bool = False) -> None:
        should_close = should_close or self._pool.dropped
        transport = protocol.transport
        if transport is not None and not should_close:
            # By the end of an answer the peer's ticket (sent after the handshake) has been read.
            self._pool.context.sessions.keep(transport.get_extra_info("ssl_object"))
        super()._release(key, protocol, should_close=should_close)

    async def open_spare(self, url: str, server_hostname: str) -> None:
        """One more idle connection to ``url``, as a request there would have opened it."""
        request = aiohttp.ClientRequest("GET", URL(url), loop=self._loop, server_hostname=server_hostname)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=SPARE_CONNECT_TIMEOUT_S)
        proto = await self._create_connection(request, [], timeout)
        if self.closed:
            proto.close()
            return
        self._acquired.add(proto)  # _release moves it from the busy set to the idle list, stamped now
        self._release(request.connection_key, proto)

    def counts(self) -> tuple[int, int]:
        """(idle, in use)."""
        return sum(len(c) for c in self._conns.values()), len(self._acquired)

    def trim(self, keep: int) -> int:
        """Close idle connections, least recently used first, until at most ``keep`` are open."""
        idle, busy = self.counts()
        excess = min(idle, idle + busy - keep)
        closed = 0
        for conns in list(self._conns.values()):
            while conns and closed < excess:
                proto, _ = conns.popleft()
                proto.close()
                closed += 1
        for key in [k for k, c in self._conns.items() if not c]:
            del self._conns[key]
        return closed

    def cut_all(self) -> None:
        """Close every connection now: idle ones, and those carrying a stream, which then ends with a
        cut (an abort reaches the response as a lost connection; aiohttp's own close would leave its
        reader waiting)."""
        self.trim(0)
        for proto in list(self._acquired):
            transport = proto.transport
            if transport is not None:
                transport.abort()

    def cut_settled(self) -> bool:
        """Every cut connection has told its response it was lost."""
        return all(proto.transport is None for proto in self._acquired)

    def set_keepalive(self, seconds: float) -> None:
        self._keepalive_timeout = seconds  # read by aiohttp's reaper and its reuse check


class WarmPool:
    """One peer's relay connections: the connector's owner, its demand and its counts."""

    def __init__(self, context: ResumingContext, fingerprint: str, hostname: str, label: str) -> None:
        self.context, self.fingerprint, self.hostname, self.label = context, fingerprint, hostname, label
        self.keepalive_s = client_keepalive_s(None)
        self.demand = Demand(CLIENT_KEEPALIVE_S)
        self.full = self.resumed = self.refused = self.spliced = 0
        self.dropped = False
        self._sets: list[WarmConnections] = []
        self._streams: WarmConnections | None = None  # where relayed streams go, and so the spares
        self._spares: asyncio.Task[None] | None = None

    def make_connector(self, **kwargs: Any) -> WarmConnector:
        connector = WarmConnector(self, **kwargs)
        self._sets.append(connector)
        if self._streams is None or self._streams.closed:
            self._streams = connector
        return connector

    def attach(self, connections: WarmConnections) -> None:
        """The set pass-through streams are relayed on (the splice's): the spares are opened there."""
        self._sets.append(connections)
        self._streams = connections

    @property
    def streams(self) -> WarmConnections | None:
        """The set relayed streams are carried on (spares open there)."""
        return self._streams

    def _live(self) -> list[WarmConnections]:
        self._sets = [s for s in self._sets if not s.closed]
        return self._sets

    def counts(self) -> tuple[int, int]:
        """(idle, in use), over every set."""
        pairs = [s.counts() for s in self._live()]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)

    def admit(self, ssl_object: ssl.SSLObject | None) -> bool:
        """Whether a new connection (full handshake or resumed) may carry requests: its certificate is
        the pinned one. A refused one (its caller closes it) costs us the session; an admitted one is
        counted, and a full handshake's ticket, when it comes, serves the next connections."""
        if self.dropped or not check_pin(ssl_object, self.fingerprint):
            self.context.sessions.clear()
            self.refused += 1
            log.warning("closed a connection to %s: its certificate is not the pinned one", self.label)
            return False
        assert ssl_object is not None  # check_pin passed
        if ssl_object.session_reused:
            self.resumed += 1
        else:
            self.full += 1
            self.context.sessions.verified(ssl_object)
        return True

    def target(self) -> int:
        return max(WARM_MIN, min(WARM_MAX, self.demand.peak()))

    def server_keepalive(self, seconds: float | None) -> None:
        """The peer told how long its server keeps an idle connection: keep ours shorter."""
        self.keepalive_s = client_keepalive_s(seconds)
        for connections in self._live():
            connections.set_keepalive(self.keepalive_s)

    def maintain(self, url: str | None) -> None:
        """Called at each successful poll: trim idle connections above the target, open missing ones
        (in the background, one batch at a time) when ``url`` (the peer's relay) is known."""
        connector = self._streams
        if self.dropped or connector is None or connector.closed:
            return
        target = self.target()
        for connections in self._live():
            connections.trim(target)
        idle, busy = connector.counts()
        missing = target - idle - busy
        if url is None or missing <= 0 or (self._spares is not None and not self._spares.done()):
            return
        self._spares = asyncio.create_task(self._open_spares(connector, url, missing), name=f"warm-{self.label}")

    async def _open_spares(self, connector: WarmConnections, url: str, count: int) -> None:
        results = await asyncio.gather(*(connector.open_spare(url, self.hostname) for _ in range(count)),
                                       return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            log.debug("opening %d spare connections to %s: %d failed (%r)", count, self.label, len(failed), failed[0])

    def drop(self) -> None:
        """Unpaired or re-pinned: no session offered or kept, every connection closed now."""
        self.dropped = True
        self.context.sessions.disable()
        if self._spares is not None:
            self._spares.cancel()
        for connections in self._live():
            connections.cut_all()

    async def aclose(self) -> None:
        """After ``drop``: wait (briefly) for the cut streams to hear of it, before the session closes
        what is left (a close after that point would leave a stream's reader waiting)."""
        for _ in range(CUT_SETTLE_STEPS):  # a few loop turns: the abort's callbacks
            if all(connections.cut_settled() for connections in self._live()):
                break
            await asyncio.sleep(0.005)
        if self._spares is not None:
            self._spares.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._spares

    def row(self) -> RelayPoolRow:
        idle, busy = self.counts()
        return {"idle": idle, "in_use": busy, "target": 0 if self.dropped else self.target(),
                "peak_in_flight": self.demand.peak(), "keepalive_s": self.keepalive_s,
                "handshakes_full": self.full, "handshakes_resumed": self.resumed, "refused": self.refused,
                "session_cached": self.context.sessions.held, "spliced": self.spliced}
