"""A peer's pass-through relay streams on the splice's own connections, under the warm pool's rules.

B relays a stream whose caller and A speak the same API: read through aiohttp's client, each chunk
cost B a task wake, a StreamReader and a timer re-arm (bench/README.md, *The quiet full run of
2026-12-05*, rows 3 and 5). ``WarmSplice`` is the splice's client (``backends/splice_client.py``)
with the connections of one peer's ``WarmPool`` (``warm_pool.py``, whose rules it keeps):

* every connection, full handshake or resumed (``ResumingContext``), is checked against the pin
  before it carries a request; one that fails is closed and the session forgotten, as is the session
  after any TLS failure;
* connections are opened a few at a time (``opening``: under the peer's handshake budget), and at
  most ``limit`` streams are relayed at once (the peer's port admits so many connections): one
  beyond waits for another to end, within its first-byte budget, as on aiohttp's connector;
* an idle one is closed after the pool's ``keepalive_s`` (shorter than the peer's server's), which
  follows what the peer tells; the pool trims idle ones above its target and opens spares here;
* ``cut_all`` (the pool's ``drop``) closes every connection, those carrying a stream too.

A kept connection that ended unanswered is not asked again (``resend_unanswered`` off): the peer
may serve the request from a rented node, where a second copy could be billed.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from app.services.backends.base import DEFAULT_IDLE_TIMEOUT_S, Opened
from app.services.backends.http_open import FAILOVER_STATUSES
from app.services.backends.splice_client import SpliceClient, _Conn, _Pool
from app.services.cluster.warm_pool import WARM_MAX
from app.services.errors import UpstreamError, UpstreamTimeout

if TYPE_CHECKING:
    from app.services.cluster.warm_pool import WarmPool


class _WarmConn(_Conn):
    """A splice connection its ``WarmSplice`` knows of from its handshake to its close."""

    def __init__(self, pool: _Pool, owner: WarmSplice) -> None:
        super().__init__(pool)
        self.owner = owner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.owner.conns.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner.conns.discard(self)
        super().connection_lost(exc)

    def close(self) -> None:
        self.owner.conns.discard(self)
        super().close()

    def idle(self) -> None:
        warm = self.owner.warm
        if warm.dropped or self.owner.closed:
            self.exchange = None
            self.close()
            return
        # By the end of an answer the peer's ticket (sent after the handshake) has been read.
        if self.transport is not None:
            warm.context.sessions.keep(self.transport.get_extra_info("ssl_object"))
        super().idle()


class WarmSplice(SpliceClient):
    """One peer's splice connections, pinned, paced, reaped and sized by its ``WarmPool``."""

    def __init__(self, warm: WarmPool, *, opening: int, limit: int, connect_timeout_s: float) -> None:
        super().__init__(warm.context, connect_timeout_s=connect_timeout_s, keep_idle_s=warm.keepalive_s,
                         max_idle=WARM_MAX, resend_unanswered=False, server_hostname=warm.hostname)
        self.warm = warm
        self.conns: set[_WarmConn] = set()
        self._closed = False
        self._opening = asyncio.Semaphore(opening)
        self._streams = asyncio.Semaphore(limit)  # one per stream under way, as aiohttp's ``limit``
        warm.attach(self)

    @property
    def closed(self) -> bool:
        return self._closed

    def _protocol(self, pool: _Pool) -> _Conn:
        return _WarmConn(pool, self)

    async def _connect(self, scheme: str, host: str, port: int, pool: _Pool, label: str) -> _Conn:
        warm = self.warm
        if warm.dropped or self._closed:
            raise UpstreamError(f"{warm.label} is no longer paired")
        async with self._opening:
            try:
                conn = await super()._connect(scheme, host, port, pool, label)
            except ssl.SSLError:
                warm.context.sessions.clear()  # whatever answers there now did not take our session
                raise
        transport = conn.transport
        if self._closed or not warm.admit(transport.get_extra_info("ssl_object") if transport is not None else None):
            conn.close()
            raise ssl.SSLCertVerificationError(f"{warm.label} did not show its pinned certificate")
        return conn

    async def open(self, url: str, *, json_body: Mapping[str, object], headers: dict[str, str],
                   first_byte_timeout_s: float, idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S, label: str,
                   retry_statuses: frozenset[int] = FAILOVER_STATUSES) -> Opened:
        """The splice's ``open``, once fewer than ``limit`` streams are under way (waited for within
        the first-byte budget); the stream's slot is given back when it is closed."""
        started = time.monotonic()
        try:
            async with asyncio.timeout(first_byte_timeout_s):
                await self._streams.acquire()
        except TimeoutError as exc:
            raise UpstreamTimeout(f"{label} sent nothing within {first_byte_timeout_s:g} s") from exc
        try:
            opened = await super().open(
                url, json_body=json_body, headers=headers,
                first_byte_timeout_s=max(0.001, first_byte_timeout_s - (time.monotonic() - started)),
                idle_timeout_s=idle_timeout_s, label=label, retry_statuses=retry_statuses)
        except BaseException:
            self._streams.release()
            raise
        release = opened.closer
        held = True

        async def close() -> None:
            nonlocal held
            if held:
                held = False
                self._streams.release()
            if release is not None:
                await release()

        opened.closer = close
        return opened

    # --- the pool's policy drives these (warm_pool.WarmConnections) ----------------------------
    async def open_spare(self, url: str, server_hostname: str) -> None:
        """One more idle connection to ``url``, as a request there would have opened it."""
        parts = urlsplit(url)
        host = parts.hostname or "127.0.0.1"
        port = parts.port or 443
        pool = self._pool("https", host, port)
        conn = await self._connect("https", host, port, pool, self.warm.label)
        conn.idle()  # closed instead when the pool was dropped or closed meanwhile

    def counts(self) -> tuple[int, int]:
        idle = sum(len(pool.idle) for pool in self._pools.values())
        return idle, max(0, len(self.conns) - idle)

    def trim(self, keep: int) -> int:
        """Close idle connections, least recently used first, until at most ``keep`` are open."""
        idle, busy = self.counts()
        excess = min(idle, idle + busy - keep)
        closed = 0
        for pool in self._pools.values():
            while pool.idle and closed < excess:
                pool.idle.popleft().close()
                closed += 1
        return closed

    def cut_all(self) -> None:
        """Close every connection now; a stream under way ends with a cut."""
        self.trim(0)
        for conn in list(self.conns):
            if conn.transport is not None:
                conn.transport.abort()

    def cut_settled(self) -> bool:
        return not self.conns

    def set_keepalive(self, seconds: float) -> None:
        self._keep_idle_s = seconds
        for pool in self._pools.values():
            pool.set_keep_idle(seconds)

    async def aclose(self) -> None:
        self._closed = True
        self.cut_all()
        await super().aclose()
