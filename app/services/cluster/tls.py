"""TLS contexts for the cluster port: mutual TLS against pinned node certificates.

Verification is never switched off. Instead of a CA, each side trusts exactly
the certificates it has pinned:

* The **server** requires a client certificate and loads every pinned peer
  certificate as a trust anchor, so an unpinned client is refused during the
  handshake. With no pins at all the trust store is empty, and OpenSSL,
  still requiring a certificate, refuses every client.
* The **client** trusts only the one peer it is calling, keeps
  ``check_hostname`` on, and names the peer by ``<uuid>.node.pairwise``
  (``peer_hostname``), so a certificate pinned for one node cannot answer for
  another. With httpx pass ``extensions={"sni_hostname": peer_hostname(id)}``
  on each request (httpcore hands it to the handshake as ``server_hostname``);
  with aiohttp pass ``server_hostname=``. Use one client per peer: the
  context trusts that peer only.

Pin removal. A live ``SSLContext`` can gain trust anchors but never lose
them, and aiohttp's server keeps the context it was started with. So
``TlsContexts.server`` is a stable front context whose SNI callback hands each
new handshake to a context rebuilt from the current pins (``refresh``, run
on every trust store change); a removed peer is refused at its next handshake.
A keep-alive connection opened before the removal survives the handshake
check, and a chain that a pinned (CA:TRUE) peer signed itself would pass it,
so the server must also call ``peer_fingerprint_allowed`` on every request:
it accepts only a leaf certificate that is pinned right now.
``pin_check_middleware`` does that for aiohttp.

Session resumption. The server issues one TLS 1.3 ticket per handshake; a
resumed session carries the client certificate its full handshake verified,
which the per-request check judges like any other. When a pin goes, the front
context is replaced (``on_front_change``), and with it the keys that seal
tickets: no session from before resumes. The relay's client side resumes only
with a ``resuming_client_context`` of one pin (``tls_sessions.py``).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from app.services.cluster.identity import NodeIdentity, fingerprint_of_der, peer_hostname
from app.services.cluster.tls_sessions import ResumingContext, SessionCache
from app.services.cluster.trust import PeerPin, TrustStore

__all__ = [
    "PEER_PIN_KEY",
    "TlsContexts",
    "client_context",
    "peer_fingerprint",
    "peer_fingerprint_allowed",
    "peer_hostname",
    "peer_pin",
    "pin_check_middleware",
    "resuming_client_context",
    "server_context",
]

log = logging.getLogger(__name__)


def _base(purpose: int, identity: NodeIdentity, kind: type[ssl.SSLContext] = ssl.SSLContext) -> ssl.SSLContext:
    ctx = kind(purpose)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(identity.cert_path, identity.key_path)
    # A server context would not even ask for a client certificate by default;
    # on the cluster port every peer must show one, in both directions.
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def server_context(identity: NodeIdentity, trust: TrustStore) -> ssl.SSLContext:
    """A server context trusting exactly the pinned peers (none pinned: nobody).

    No system roots are loaded (``SSLContext()`` starts empty, unlike
    ``create_default_context``), so an empty trust store refuses everyone.
    """
    ctx = _base(ssl.PROTOCOL_TLS_SERVER, identity)
    # One TLS 1.3 session ticket per handshake, so a peer's next connection can resume (a burst of
    # relayed streams costs one full handshake, not hundreds). A resumed session skips certificate
    # verification, so it is judged by what it carries: the client certificate of the handshake that
    # made it, checked against today's pins on every request (``pin_check_middleware``). Tickets are
    # sealed with the front context's keys, which ``TlsContexts`` replaces whenever a pin goes.
    ctx.num_tickets = 1
    pems = [pin.cert_pem for pin in trust.all()]
    if pems:
        ctx.load_verify_locations(cadata="\n".join(pems))
    return ctx


def client_context(identity: NodeIdentity, peer: PeerPin) -> ssl.SSLContext:
    """A client context presenting our certificate and trusting only ``peer``'s pinned one.

    ``PROTOCOL_TLS_CLIENT`` turns ``check_hostname`` on; connect with
    ``server_hostname=peer_hostname(peer.node_id)``.
    """
    ctx = _base(ssl.PROTOCOL_TLS_CLIENT, identity)
    ctx.load_verify_locations(cadata=peer.cert_pem)
    return ctx


def resuming_client_context(identity: NodeIdentity, peer: PeerPin) -> ResumingContext:
    """``client_context`` that resumes TLS sessions with ``peer`` (``tls_sessions``), its cache empty."""
    ctx = _base(ssl.PROTOCOL_TLS_CLIENT, identity, ResumingContext)
    assert isinstance(ctx, ResumingContext)
    ctx.load_verify_locations(cadata=peer.cert_pem)
    ctx.sessions = SessionCache()
    return ctx


def peer_fingerprint(ssl_object: ssl.SSLObject | ssl.SSLSocket | None) -> str | None:
    """Fingerprint of the leaf certificate the peer presented, if any."""
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    return fingerprint_of_der(der) if der else None


def peer_fingerprint_allowed(ssl_object: ssl.SSLObject | ssl.SSLSocket | None, trust: TrustStore) -> bool:
    """True if the peer's leaf certificate is pinned in ``trust`` right now."""
    return peer_pin(ssl_object, trust) is not None


def peer_pin(ssl_object: ssl.SSLObject | ssl.SSLSocket | None, trust: TrustStore) -> PeerPin | None:
    """The pin of the peer on this TLS connection, or None if it is not (or no longer) pinned."""
    fingerprint = peer_fingerprint(ssl_object)
    return trust.by_fingerprint(fingerprint) if fingerprint else None


class TlsContexts:
    """Holds the cluster server context and keeps it in step with the trust store."""

    def __init__(self, identity: NodeIdentity, trust: TrustStore, *, follow: bool = True) -> None:
        self.identity = identity
        self.trust = trust
        self._current = server_context(identity, trust)
        self._pinned = self._fingerprints()
        self._front_listeners: list[Callable[[ssl.SSLContext], None]] = []
        self.server = self._front()
        self._follow = follow
        if follow:
            trust.add_listener(self.refresh)

    def _fingerprints(self) -> frozenset[str]:
        return frozenset(pin.fingerprint for pin in self.trust.all())

    def _front(self) -> ssl.SSLContext:
        # The front context is what each connection's handshake starts with. OpenSSL seals and opens
        # session tickets with the keys of that first context (not the one the SNI callback switches
        # to), fresh random keys per context: a new front context voids every ticket issued before.
        front = server_context(self.identity, self.trust)
        front.sni_callback = self._pick_context
        return front

    def _pick_context(self, ssl_object: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        # Switching the handshake to the freshest context swaps its trust anchors too,
        # which is how a removed pin stops working without restarting the listener.
        ssl_object.context = self._current
        return None

    def on_front_change(self, callback: Callable[[ssl.SSLContext], None]) -> None:
        """``callback(new_front)`` after the front context was replaced (a listener must switch to it)."""
        self._front_listeners.append(callback)

    def refresh(self) -> None:
        """Rebuild the per-handshake context from the current pins; when a pin went (unpaired,
        re-paired with another certificate), also the front context, voiding every session ticket."""
        self._current = server_context(self.identity, self.trust)
        pinned = self._fingerprints()
        gone, self._pinned = self._pinned - pinned, pinned
        if gone:
            self.server = self._front()
            for callback in list(self._front_listeners):
                callback(self.server)

    def client(self, peer: PeerPin) -> ssl.SSLContext:
        return client_context(self.identity, peer)

    def peer_fingerprint_allowed(self, ssl_object: ssl.SSLObject | ssl.SSLSocket | None) -> bool:
        """Call on every request: refuses peers unpinned since their handshake."""
        return peer_fingerprint_allowed(ssl_object, self.trust)

    def peer_pin(self, ssl_object: ssl.SSLObject | ssl.SSLSocket | None) -> PeerPin | None:
        return peer_pin(ssl_object, self.trust)

    def close(self) -> None:
        if self._follow:
            self.trust.remove_listener(self.refresh)
            self._follow = False


PEER_PIN_KEY = web.RequestKey("pairwise.peer_pin", PeerPin)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def pin_check_middleware(contexts: TlsContexts) -> Middleware:
    """aiohttp middleware: refuse any request whose TLS peer is not pinned now.

    The matching pin is stored on the request under ``PEER_PIN_KEY`` so
    handlers know which node is calling without trusting anything it says.
    """

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        transport = request.transport
        ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
        pin = contexts.peer_pin(ssl_object)
        if pin is None:
            log.warning("refused a cluster request from an unpinned peer (%s)", request.remote)
            raise web.HTTPForbidden(text="peer not paired")
        request[PEER_PIN_KEY] = pin
        return await handler(request)

    return middleware
