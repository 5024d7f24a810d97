"""HTTPS to one paired peer's cluster port.

One pair of clients per peer, because their TLS context trusts exactly that
peer's pinned certificate (``client_context``) and presents ours; the hostname
checked is ``<uuid>.node.pairwise``, passed per request (``sni_hostname`` for
httpx, ``server_hostname`` for aiohttp and the splice) since the URL names an IP
address. Verification stays on. Small JSON calls (facts, replication) go through
httpx; a relayed pass-through stream (the caller's API is the one asked of the peer)
goes on the splice's own connections (``warm_splice.WarmSplice``), and whole answers,
and every relayed request with ``PAIRWISE_SPLICE=off``, through the data plane's
aiohttp client (``backends.stream_client``); both under one warm pool and context.

Every request says who we are beyond the certificate: our current display
name and our cluster port, so a peer can find us again after our address
changed (it combines the port with the address it sees the request come from).
"""

from __future__ import annotations

import json

import httpx

from app.environment import environment
from app.services.backends.base import Opened
from app.services.backends.http_open import FAILOVER_STATUSES
from app.services.backends.stream_client import StreamClient
from app.services.cluster.identity import NodeIdentity, peer_hostname
from app.services.cluster.tls import client_context, resuming_client_context
from app.services.cluster.trust import PeerPin
from app.services.cluster.warm_pool import WarmPool
from app.services.cluster.warm_splice import WarmSplice
from app.services.errors import PairwiseError, UpstreamError
from app.services.json_types import JsonObject, JsonValue
from app.services.text_safety import printable

API_PREFIX = "/cluster/v1"
# A peer that refuses (403: it no longer pins us, or policy) may leave another owner able to serve.
RELAY_RETRY_STATUSES = FAILOVER_STATUSES | {401, 403}


# Relay connections opened at once to one peer: under the peer's budget of TLS handshakes per address
# (listener_budget: 32). Once verified, a peer's connections are capped by the port's total only.
RELAY_OPENING_PER_PEER = 24
RELAY_CONNECTIONS_PER_PEER = 512
# A small JSON call's answer (facts, inventory) is read up to this size: a peer cannot fill our memory.
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class PeerError(PairwiseError):
    title = "Peer unreachable"
    status = 502


def url_for(address: str, path: str) -> str:
    return f"https://{address}{API_PREFIX}{path}"


class PeerClient:
    def __init__(self, identity: NodeIdentity, pin: PeerPin, self_headers: dict[str, str]) -> None:
        self.pin = pin
        self.hostname = peer_hostname(pin.node_id)
        self._self_headers = self_headers  # shared and kept current by the cluster
        self._client = httpx.AsyncClient(
            verify=client_context(identity, pin),
            timeout=httpx.Timeout(connect=5.0, read=None, write=30.0, pool=30.0),
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
            trust_env=False,
        )
        # A burst of relayed streams opens its connections a few at a time (under the peer's budget of
        # handshakes per address) instead of being refused; each stream still gets its own connection,
        # kept warm for the next burst and resumed from the peer's last TLS session (warm_pool.py).
        # Small calls stay on httpx without resumption: polls keep their one connection alive.
        streams_context = resuming_client_context(identity, pin)
        self.pool = WarmPool(streams_context, pin.fingerprint, self.hostname, self.label)
        self._streams = StreamClient(streams_context, connect_timeout_s=5.0, max_connections=RELAY_CONNECTIONS_PER_PEER,
                                     max_opening=RELAY_OPENING_PER_PEER, paced_connector=self.pool.make_connector)
        self._splice = (None if environment().splice_off else
                        WarmSplice(self.pool, opening=RELAY_OPENING_PER_PEER, limit=RELAY_CONNECTIONS_PER_PEER,
                                   connect_timeout_s=5.0))

    @property
    def label(self) -> str:
        return f"node {self.pin.name}"

    def _address(self, address: str | None) -> str:
        chosen = address or self.pin.address
        if not chosen:
            raise PeerError(f"no address is known for {self.label}; add one with 'pairwise peers add HOST:PORT'")
        return chosen

    def _extensions(self) -> JsonObject:
        return {"sni_hostname": self.hostname}

    async def call(self, method: str, path: str, body: JsonValue = None, *, timeout_s: float = 10.0,
                   address: str | None = None) -> JsonValue:
        """A small JSON call; any failure is a ``PeerError`` naming the peer and the reason."""
        url = url_for(self._address(address), path)
        try:
            async with self._client.stream(method, url, json=body, headers=self._self_headers, timeout=timeout_s,
                                           extensions=self._extensions()) as response:
                raw = bytearray()
                async for part in response.aiter_bytes():
                    raw += part
                    if len(raw) > MAX_ANSWER_BYTES:
                        raise PeerError(f"{self.label} answered {path} with more than {MAX_ANSWER_BYTES} bytes")
        except httpx.HTTPError as exc:
            raise PeerError(f"{self.label} at {self._address(address)} could not be reached: "
                            f"{type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            text = printable(bytes(raw[:400]).decode("utf-8", "replace"), 200)
            raise PeerError(f"{self.label} answered {response.status_code} to {path}: {text}")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise PeerError(f"{self.label} answered {path} with invalid JSON") from exc

    async def open_relay(self, body: JsonObject, headers: dict[str, str], first_byte_timeout_s: float,
                         idle_timeout_s: float, *, pass_through: bool = False) -> Opened:
        """POST a request to the peer's relay; the first chunk is read before returning.
        ``pass_through``: a stream the peer answers in the API our caller speaks (the splice's)."""
        if self.pool.dropped:
            raise UpstreamError(f"{self.label} is no longer paired")
        try:
            url = url_for(self._address(None), "/relay")
        except PeerError as exc:
            raise UpstreamError(exc.message) from exc
        demand = self.pool.demand
        demand.enter()
        try:
            if pass_through and self._splice is not None:
                opened = await self._splice.open(
                    url, json_body=body, headers={**self._self_headers, **headers},
                    first_byte_timeout_s=first_byte_timeout_s, idle_timeout_s=idle_timeout_s, label=self.label,
                    retry_statuses=RELAY_RETRY_STATUSES)
                self.pool.spliced += 1
            else:
                opened = await self._streams.open(
                    url, json_body=body, headers={**self._self_headers, **headers},
                    first_byte_timeout_s=first_byte_timeout_s, idle_timeout_s=idle_timeout_s, label=self.label,
                    retry_statuses=RELAY_RETRY_STATUSES, server_hostname=self.hostname,
                )
        except BaseException:
            demand.leave()
            raise
        release = opened.closer
        left = False

        async def close() -> None:
            nonlocal left
            if not left:
                left = True
                demand.leave()
            if release is not None:
                await release()

        opened.closer = close
        return opened

    def relay_url(self) -> str | None:
        """Where relayed streams go now (None: no address known)."""
        address = self.pin.address
        return url_for(address, "/relay") if address else None

    def keep_warm(self) -> None:
        """At each good poll: the pool trimmed to its target and its missing connections opened ahead."""
        if not self.pool.dropped:
            self._streams.connector()  # the pool's connector exists before the first relayed stream
            self.pool.maintain(self.relay_url())

    def drop(self) -> None:
        """The peer was unpaired or re-pinned: its warm connections and TLS sessions go now."""
        self.pool.drop()

    async def aclose(self) -> None:
        self.pool.drop()
        await self.pool.aclose()
        await self._client.aclose()
        await self._streams.aclose()
        if self._splice is not None:
            await self._splice.aclose()
