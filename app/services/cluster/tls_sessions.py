"""TLS session resumption to one paired peer, only while its pinned identity is the one we trust.

A relayed stream holds its own connection to the peer, so a burst of streams opens a burst of
mutual-TLS handshakes (bench/README.md, *Warm peers*). TLS 1.3 resumption lets every connection
after the first skip both certificates and both signatures: the peer's ticket stands for the
handshake that verified its pinned certificate.

What keeps that safe:

* The cache lives on the ``ResumingContext`` of one ``PeerClient``, which trusts exactly one pinned
  certificate. A peer re-paired with another certificate gets a new client, a new context and an
  empty cache; Python itself refuses a session made under another context.
* ``SessionCache.clear`` (unpair, re-pin, a connection whose certificate did not match) forgets the
  ticket at once: the next connection is a full handshake, verified against the pin.
* Every connection, resumed or not, is checked by ``check_pin`` before it carries a request: the
  certificate a resumed session carries (``getpeercert(binary_form=True)``) must be the pinned one.

The server side (``tls.server_context``) issues one ticket per handshake and voids them all when a
pin goes (``TlsContexts`` replaces the front context, whose keys seal them).
"""

from __future__ import annotations

import hmac
import ssl
import time
from collections import deque
from typing import Any

from app.services.cluster.identity import fingerprint_of_der


class SessionCache:
    """The latest resumable session with one peer (TLS 1.3 tickets without early data may be
    offered more than once, so one session serves a whole burst)."""

    def __init__(self) -> None:
        self._session: ssl.SSLSession | None = None
        # Connections whose certificate was checked but whose ticket may still be on its way (a TLS 1.3
        # ticket follows the handshake): the first to have one gives the session, so a burst resumes
        # from its first connections on rather than from the first answer that ends.
        self._verified: deque[ssl.SSLObject] = deque(maxlen=8)
        self.enabled = True

    def verified(self, ssl_object: ssl.SSLObject) -> None:
        """A connection whose peer certificate is the pinned one: its session may be kept."""
        if self.enabled and self._session is None:
            self._verified.append(ssl_object)

    def offer(self) -> ssl.SSLSession | None:
        if not self.enabled:
            return None
        if self._session is None:
            for ssl_object in list(self._verified):
                ticketed = ssl_object.session
                if ticketed is not None and ticketed.has_ticket:
                    self.keep(ssl_object)
                    break
        session = self._session
        if session is None:
            return None
        if time.time() >= session.time + min(session.timeout, session.ticket_lifetime_hint or session.timeout):
            self._session = None  # expired: the peer would refuse it and cost us a round of ticket checks
            return None
        return session

    def keep(self, ssl_object: ssl.SSLObject | None) -> None:
        """Remember the session of a connection whose certificate was checked against the pin."""
        if ssl_object is None or not self.enabled:
            return
        session = ssl_object.session
        if session is not None and session.has_ticket and session is not self._session:
            self._session = session
            self._verified.clear()

    def clear(self) -> None:
        self._session = None
        self._verified.clear()

    def disable(self) -> None:
        """For good (the peer was unpaired or re-pinned): nothing is offered or kept any more."""
        self.enabled = False
        self.clear()

    @property
    def held(self) -> bool:
        return self._session is not None


class ResumingContext(ssl.SSLContext):
    """A client context that offers its peer's cached session on every new connection.

    asyncio's and uvloop's TLS transports (and so aiohttp's connector) create their ``SSLObject``
    through ``wrap_bio`` without a session; this is the one place a session can be handed in."""

    sessions: SessionCache

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: Any = None, session: ssl.SSLSession | None = None) -> ssl.SSLObject:
        if session is None and not server_side:
            session = self.sessions.offer()
        return super().wrap_bio(incoming, outgoing, server_side=server_side, server_hostname=server_hostname,
                                session=session)


def check_pin(ssl_object: ssl.SSLObject | None, fingerprint: str) -> bool:
    """True if the connection's peer certificate is the pinned one, resumed session or not."""
    if ssl_object is None:
        return False
    der = ssl_object.getpeercert(binary_form=True)
    return der is not None and hmac.compare_digest(fingerprint_of_der(der), fingerprint)
