"""The cluster: identity, pinned trust, PIN pairing, the cluster port, peers, shared jobs.

Foundation:

    identity.py          NodeIdentity: node UUID + self-signed certificate (0600 key, atomic files)
    trust.py             TrustStore of PeerPins keyed by node UUID
    tls.py               server/client SSL contexts that trust exactly the pins; per-request pin check
    pairing_protocol.py  wire format, errors and key confirmation of PIN pairing (SPAKE2)
    pairing.py           PairingHost (inviter) and join (joiner)

A node as a cluster member (``attach.attach_cluster(node)``, called by bootstrap.build_node):

    service.py           ClusterService: start/stop order of everything below
    server.py            the cluster port (aiohttp, mutual TLS): facts, inventory, relay, job events, unpair
    relay.py             serving a peer's request here (local_only: never relayed onward)
    facts.py             what peers may learn: facts, shareable inventory, load (no URLs, no secrets)
    peer_client.py       HTTPS to one peer, trusting only its pin
    peer_upstream.py     PeerUpstream: a peer as a routing candidate
    peers.py             PeerManager: polling, online/offline, addresses found again, ``peers add``
    replication.py       shared Jobs: origin-pushed workload records, silent peers' jobs failed
    membership.py        ``pair remove`` and telling the other side, now or when it can be reached
    pairing_service.py   invites on the pairing port, joins, tombstones for ended invites
    discovery.py         mDNS announce/browse of ``_pairwise._tcp``
    attach.py            hooks into the node and the control routes the CLI uses (app/cli_cluster.py)

Errors (all ``PairwiseError``, so they carry a title and a message)::

    IdentityError
    TrustStoreError
    PairingError
    ├── WrongPin             "wrong PIN (n tries left)"
    ├── InvalidPin           "a PIN is six digits"
    ├── PinVoid              "too many wrong tries; the PIN is void"
    ├── PinExpired           "PIN expired"
    ├── PinAlreadyUsed       "PIN already used"
    ├── AlreadyMember        "this node is already a member"
    ├── PairingUnavailable   no invite pending / listener closed
    ├── PairingBusy          the inviter runs as many sessions as it will (in all, or from this address)
    └── PairingProtocolError the other side broke the protocol or failed key confirmation
"""

from app.services.cluster.identity import IdentityError, NodeIdentity, peer_hostname
from app.services.cluster.pairing import Invite, InviteState, PairingHost, join
from app.services.cluster.pairing_protocol import (
    AlreadyMember,
    InvalidPin,
    PairingError,
    PairingProtocolError,
    PairingUnavailable,
    PinAlreadyUsed,
    PinExpired,
    PinVoid,
    WrongPin,
)
from app.services.cluster.tls import (
    TlsContexts,
    client_context,
    peer_fingerprint_allowed,
    pin_check_middleware,
    server_context,
)
from app.services.cluster.trust import PeerPin, TrustStore, TrustStoreError, fingerprint_of_pem

__all__ = [
    "AlreadyMember",
    "IdentityError",
    "InvalidPin",
    "Invite",
    "InviteState",
    "NodeIdentity",
    "PairingError",
    "PairingHost",
    "PairingProtocolError",
    "PairingUnavailable",
    "PeerPin",
    "PinAlreadyUsed",
    "PinExpired",
    "PinVoid",
    "TlsContexts",
    "TrustStore",
    "TrustStoreError",
    "WrongPin",
    "client_context",
    "fingerprint_of_pem",
    "join",
    "peer_fingerprint_allowed",
    "peer_hostname",
    "pin_check_middleware",
    "server_context",
]
