"""The clients a rented node is reached with across the WAN: keep-alive and pool sizes.

A rented endpoint is far away (tens of ms of round trip) and behind TLS, so a new connection costs
two round trips (TCP, then TLS 1.3) before the request's own, plus a handshake's CPU on both ends.
The numbers come from ``python -m bench.wan`` (bench/README.md, "The rented link at 40 ms RTT"),
run at 40 ms RTT with the client keep-alive aiohttp and httpx have by default (15 s, 5 s):

* ``KEEPALIVE_S`` 55 (was 15): a request after a pause longer than the keep-alive took 160-186 ms
  directly against 52-61 ms warm (+105-135 ms: two round trips and a handshake), and a
  conversation's next turn usually comes after tens of seconds of reading; after 30 s the node's
  request is now warm. An idle connection costs only its memory. 55 s stays under the 60 s idle
  timeout of common cloud load balancers, so the sponsor closes first. An endpoint that closes
  sooner (uvicorn's 5 s; the bench's 1 s endpoint) is seen closing and the next request connects
  anew, with no error (measured); only a request sent within the one-way delay of that close can
  meet the dead connection, and it fails over like any unreachable upstream (aiohttp does not
  resend a POST, and resending one that may have reached the endpoint could bill it twice).
* ``PROBE_KEEPALIVE_S`` 55 (was httpx's 5): probes run every 30 s (``PAIRWISE_RENTED_REFRESH_S``),
  so each one opened a TLS handshake across the WAN; longer than the refresh, they reuse one
  connection (0 handshakes while idle since).
* ``POOL_LIMIT`` 1024 (kept): a stream holds its connection for its whole answer, and the planner
  orders rented nodes by capacity but does not cap them, so a limit below the streams sent would
  make one stream wait for another's whole answer. The pool keeps every connection it opened:
  a burst of 64 streams opened 63 handshakes (one connection was warm), the next burst none, so
  no stream pays more than one handshake. Opening is not paced: the cold burst's p99 was 0.9-1.5×
  the same burst sent directly (load 12-16), where pacing would only queue the handshakes. On the
  splice (pass-through streams) it bounds the connections kept idle, and a stream never waits for a
  connection: the same bursts opened 63 of 64 handshakes, then none (2026-12-05).

Pass-through streams (the caller speaks the endpoint's API) go on the splice's own connections
(``backends/splice_client.py``), as a local engine's do, with the same keep-alive and pool size
(the node's added warm p50 +2.70 → +2.11 ms, median of six same-run A/Bs at load 2-5);
translated streams and whole answers keep aiohttp's. The splice's client never resends a request on
a kept connection that ended unanswered (it may have reached the endpoint: billed twice); it polls a
kept connection's socket before reusing it instead, so a close the loop has not read yet is not met.

``PAIRWISE_RENTED_KEEPALIVE_S`` overrides the keep-alive (the bench's short runs; running node only).
"""

from __future__ import annotations

import httpx

from app.environment import environment
from app.services.backends.splice_client import SpliceClient
from app.services.backends.stream_client import StreamClient
from app.services.outbound import make_client, outbound_ssl_context

KEEPALIVE_S = 55.0
PROBE_KEEPALIVE_S = 55.0
POOL_LIMIT = 1024
PROBE_TIMEOUT_S = 30.0


def keepalive_s() -> float:
    return environment().seconds("PAIRWISE_RENTED_KEEPALIVE_S", KEEPALIVE_S)


def stream_client(extra_ca: tuple[str, ...]) -> StreamClient:
    """Inference streams (the data plane)."""
    return StreamClient(outbound_ssl_context(extra_ca), max_connections=POOL_LIMIT, keepalive_s=keepalive_s())


def splice_client(extra_ca: tuple[str, ...]) -> SpliceClient | None:
    """Pass-through inference streams; None with ``PAIRWISE_SPLICE=off`` (aiohttp's client then)."""
    if environment().splice_off:
        return None
    return SpliceClient(outbound_ssl_context(extra_ca), keep_idle_s=keepalive_s(), max_idle=POOL_LIMIT,
                        resend_unanswered=False)


def probe_client(extra_ca: tuple[str, ...]) -> httpx.AsyncClient:
    """Probes (model list, credential, public endpoint): a few requests every refresh."""
    return make_client(extra_ca=extra_ca, read_timeout_s=PROBE_TIMEOUT_S, keepalive_s=PROBE_KEEPALIVE_S)
