"""The data plane's HTTP client: inference streams to engines, rented nodes and peers, on aiohttp.

Same contract as ``http_open.open_stream`` (httpx, which stays for control-plane calls):
statuses that mean "try someone else" become an UpstreamError before anything reaches
the caller, and the first chunk is read under the upstream's first-byte (cold-start)
budget. After the first chunk a separate, short **idle timeout** holds between chunks,
so a stream that stalls fails in seconds rather than minutes; any error after the first
byte is an ``UpstreamError`` raised from the stream's iterator (the caller has committed by then).

Why aiohttp here (bench/README.md, "Which client for the data plane"): measured side by
side against httpx and httpx over an aiohttp transport, it costs the least CPU per chunk
and per request, and its connection pool does not walk every connection on every
request (httpcore's does, which ``ClientShards`` used to work around).

Trust is the caller's ``ssl.SSLContext``: verification always on, the system store plus
extra CAs (``outbound.outbound_ssl_context``) or a peer's pinned certificate
(``cluster.tls.client_context``) with ``server_hostname`` = the peer's UUID name.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator, Callable, Mapping

import aiohttp
from aiohttp import ClientRequest
from aiohttp.client_proto import ResponseHandler
from aiohttp.tracing import Trace

from app.services.backends.base import DEFAULT_IDLE_TIMEOUT_S, Opened
from app.services.backends.http_open import FAILOVER_STATUSES, error_text, keep_alive_only
from app.services.errors import UpstreamCut, UpstreamError, UpstreamTimeout

CONNECT_TIMEOUT_S = 10.0
KEEPALIVE_S = 15.0  # aiohttp's own default: an idle connection is closed after it (rented nodes: rented/link.py)
JSON_HEADERS = {"content-type": "application/json"}


class _PacedConnector(aiohttp.TCPConnector):
    """A connector that opens at most ``opening`` connections at once (connects and TLS handshakes);
    the connections it holds open are limited by ``limit`` alone."""

    def __init__(self, *, opening: int, ssl: ssl.SSLContext, limit: int, limit_per_host: int,
                 keepalive_timeout: float = KEEPALIVE_S) -> None:
        super().__init__(ssl=ssl, limit=limit, limit_per_host=limit_per_host, keepalive_timeout=keepalive_timeout)
        self._opening = asyncio.Semaphore(opening)

    async def _create_connection(self, req: ClientRequest, traces: list[Trace],
                                 timeout: aiohttp.ClientTimeout) -> ResponseHandler:  # noqa: ASYNC109 - aiohttp's own signature
        async with self._opening:
            return await super()._create_connection(req, traces, timeout)


class StreamClient:
    """One pooled aiohttp session per upstream, made on first use inside the running loop.

    ``max_opening``: connections opened at once (None: no limit). A peer's cluster port admits a
    bounded number of TLS handshakes per address at once; a burst of relayed streams then waits for
    its turn to connect instead of being refused, while every stream still gets its own connection."""

    def __init__(self, ssl_context: ssl.SSLContext, *, max_connections: int = 1024,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S, max_opening: int | None = None,
                 keepalive_s: float = KEEPALIVE_S,
                 paced_connector: Callable[..., _PacedConnector] | None = None) -> None:
        self._ssl = ssl_context
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._max_opening = max_opening
        self._connect_timeout_s = connect_timeout_s
        # A peer's warm pool (cluster.warm_pool) makes its own paced connector, with the same arguments.
        self._paced_connector = paced_connector
        self._session: aiohttp.ClientSession | None = None

    def _session_now(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = (aiohttp.TCPConnector(ssl=self._ssl, limit=self._max_connections, limit_per_host=0,
                                              keepalive_timeout=self._keepalive_s)
                         if self._max_opening is None else
                         _PacedConnector(opening=self._max_opening, ssl=self._ssl, limit=self._max_connections,
                                         limit_per_host=0, keepalive_timeout=self._keepalive_s)
                         if self._paced_connector is None else
                         # a peer's warm pool keeps its own keep-alive (cluster.warm_pool)
                         self._paced_connector(opening=self._max_opening, ssl=self._ssl,
                                               limit=self._max_connections, limit_per_host=0))
            self._session = aiohttp.ClientSession(
                connector=connector, trust_env=False, auto_decompress=False,  # bytes pass through as sent
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout_s),
            )
        return self._session

    def connector(self) -> aiohttp.BaseConnector | None:
        """The pool's connector, made now if need be (a warm pool opens connections ahead of requests)."""
        return self._session_now().connector

    async def open(self, url: str, *, json_body: Mapping[str, object], headers: dict[str, str],
                   first_byte_timeout_s: float, idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S, label: str,
                   retry_statuses: frozenset[int] = FAILOVER_STATUSES,
                   server_hostname: str | None = None) -> Opened:
        """POST ``json_body`` and return once the first chunk has arrived."""
        session = self._session_now()
        data = json.dumps(json_body, separators=(",", ":")).encode()
        response: aiohttp.ClientResponse | None = None
        try:
            async with asyncio.timeout(first_byte_timeout_s):
                response = await session.post(url, data=data, headers={**JSON_HEADERS, **headers},
                                              server_hostname=server_hostname)
                if response.status in retry_statuses:
                    body = await response.read()
                    raise UpstreamError(f"{label} answered {response.status}: {error_text(body)}",
                                        status=response.status)
                first = await response.content.readany()
                content_type = response.headers.get("content-type", "")
                while first and keep_alive_only(first, content_type):  # still under the first-byte budget
                    more = await response.content.readany()
                    if not more:
                        break
                    first += more
        except aiohttp.ClientError as exc:  # first: a connect timeout is a ClientError and a TimeoutError
            _close(response)
            raise UpstreamError(f"{label} could not be reached: {type(exc).__name__}: {exc}") from exc
        except TimeoutError as exc:
            _close(response)
            raise UpstreamTimeout(f"{label} sent nothing within {first_byte_timeout_s:g} s") from exc
        except BaseException:
            _close(response)
            raise
        _idle_timeout_from_now(response, idle_timeout_s)
        opened = response

        async def release() -> None:
            opened.release()  # back to the pool when fully read, closed otherwise

        return Opened(
            status=opened.status,
            content_type=opened.headers.get("content-type", "application/json"),
            first_chunk=first,
            rest=_rest(opened, label, idle_timeout_s),
            closer=release,
            headers={k.lower(): v for k, v in opened.headers.items()},
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _close(response: aiohttp.ClientResponse | None) -> None:
    if response is not None:
        response.close()


def _idle_timeout_from_now(response: aiohttp.ClientResponse, idle_timeout_s: float) -> None:
    """Swap the first-byte budget for the idle timeout on the connection's reads.

    aiohttp re-arms one timer per received packet (``sock_read``); setting it on the
    protocol and re-arming now costs nothing per chunk beyond what aiohttp already does,
    where a timeout context around every read would add a timer and a cancel scope per chunk.
    A body already read whole has no connection left, and needs no timeout.
    """
    connection = response.connection
    if connection is None or connection.protocol is None or response.content.is_eof():
        return
    connection.protocol.read_timeout = idle_timeout_s
    connection.protocol.start_timeout()


async def _rest(response: aiohttp.ClientResponse, label: str, idle_timeout_s: float) -> AsyncIterator[bytes]:
    content = response.content
    while True:
        try:
            chunk = await content.readany()
        except TimeoutError as exc:  # aiohttp's SocketTimeoutError is one
            raise UpstreamTimeout(f"the upstream {label} sent nothing for {idle_timeout_s:g} s mid-stream") from exc
        except aiohttp.ClientError as exc:
            raise UpstreamCut(f"the upstream {label} cut the stream ({type(exc).__name__})") from exc
        if not chunk:
            return
        yield chunk
