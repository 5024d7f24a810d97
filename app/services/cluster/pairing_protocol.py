"""Wire format, errors and key confirmation for PIN pairing.

Protocol ``pairwise-pair/1``. I = inviter (shows the PIN), J = joiner (types it).
Frames are a 4-byte big-endian length and a UTF-8 JSON object (at most 64 KiB).

1. Plain TCP. Neither side can authenticate the other yet, so each says who it
   claims to be::

       I -> J  {"type": "hello", "proto", "node_id", "name", "cert_pem"}   (or an error frame)
       J -> I  {"type": "hello", "proto", "node_id", "name", "cert_pem"}
       I -> J  {"type": "starttls"}

2. TLS 1.3, upgraded in place (``start_tls``), mutual and fully verified: each
   side's only trust anchor is the certificate the other *claimed* in step 1,
   J checks the hostname ``<I's uuid>.node.pairwise``, I requires J's
   certificate. The handshake proves each peer holds the key of the
   certificate it claimed; it cannot prove the claim came from the right
   machine. A man in the middle can claim its own certificates and terminate
   TLS on both sides. Step 3 catches him.

3. SPAKE2 over the PIN inside TLS (J is side A, I is side B, ids = node UUIDs)::

       J -> I  {"type": "spake", "msg", "address"}     address: J's cluster host:port
       I -> J  {"type": "spake", "msg", "address"}     address: I's cluster host:port or null
       J -> I  {"type": "confirm", "mac"}              MAC_J = HMAC(K_J, T)
       I -> J  {"type": "confirm", "mac"}              MAC_I = HMAC(K_I, T)  (only if MAC_J verified)
                or an error frame (wrong_pin, void, expired, used, already_member)
       J -> I  {"type": "done"}                        J has pinned I; I now pins J

   ``K_J``/``K_I`` are HKDF-SHA256 expansions of the SPAKE2 key with distinct
   labels. The transcript ``T`` hashes both hellos' UUIDs and names, both
   SPAKE2 messages, both addresses and, crucially, the SHA-256 fingerprints
   of the certificates **each side actually saw in the TLS handshake** (its
   own and the peer's). A relay that substitutes its certificates makes the two
   sides hash different fingerprints, so MAC_J fails at I: to I it is
   indistinguishable from a wrong PIN and spends one of the invite's tries.
   Because SPAKE2 keys depend on the PIN, a passive observer learns nothing
   and an active one gets exactly one online guess per connection.

4. Each side pins the other's certificate (PEM + fingerprint) under its UUID,
   with the exchanged cluster address; I pins only after J's ``done``, so a
   connection lost before it leaves no pin on I and pairing can simply be
   repeated (J re-pinning I is harmless).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import json
import socket
import ssl
import struct
import uuid
from dataclasses import dataclass
from typing import Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

from app.services.cluster.identity import NodeIdentity, fingerprint_of_der, peer_hostname
from app.services.cluster.trust import TrustStoreError, check_cert_for_node
from app.services.errors import PairwiseError
from app.services.json_types import JsonObject

PROTO = "pairwise-pair/1"
MAX_FRAME = 64 * 1024
MAX_NAME = 200
HANDSHAKE_TIMEOUT_S = 5.0  # a TLS handshake on the pairing port (a stranger may never finish one)


class PairingError(PairwiseError):
    """Pairing failed; ``code`` is what travels in an error frame."""

    title = "Pairing failed"
    status = 400
    code = "failed"
    default_message = "pairing failed"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.default_message)


class WrongPin(PairingError):
    title = "Wrong PIN"
    code = "wrong_pin"
    default_message = "wrong PIN"


class InvalidPin(PairingError):
    title = "Not a PIN"
    code = "invalid_pin"
    default_message = "a PIN is six digits"


class PinVoid(PairingError):
    title = "PIN void"
    code = "void"
    status = 410
    default_message = "too many wrong tries; the PIN is void"


class PinExpired(PairingError):
    title = "PIN expired"
    code = "expired"
    status = 410
    default_message = "PIN expired"


class PinAlreadyUsed(PairingError):
    title = "PIN already used"
    code = "used"
    status = 410
    default_message = "PIN already used"


class AlreadyMember(PairingError):
    title = "Already a member"
    code = "already_member"
    status = 409
    default_message = "this node is already a member"


class PairingUnavailable(PairingError):
    title = "No pairing invite"
    code = "unavailable"
    status = 503
    default_message = "no pairing invite is pending"


class PairingBusy(PairingError):
    """The inviter is answering as many joiners as it will at once (or from this address)."""

    title = "Pairing port busy"
    code = "busy"
    status = 503
    default_message = ("the other node is busy with other pairing attempts (someone on the network may be "
                       "holding its pairing port); try again in a few seconds")


class PairingProtocolError(PairingError):
    """The other side broke the protocol, or the key confirmation failed on the joiner."""

    title = "Pairing aborted"
    code = "protocol"
    default_message = "the other node broke the pairing protocol"


ERRORS_BY_CODE: dict[str, type[PairingError]] = {
    cls.code: cls
    for cls in (
        PairingError,
        WrongPin,
        InvalidPin,
        PinVoid,
        PinExpired,
        PinAlreadyUsed,
        AlreadyMember,
        PairingUnavailable,
        PairingBusy,
        PairingProtocolError,
    )
}


def error_frame(error: PairingError) -> JsonObject:
    return {"type": "error", "code": error.code, "message": error.message}


def error_from_frame(frame: JsonObject) -> PairingError:
    cls = ERRORS_BY_CODE.get(str(frame.get("code")), PairingError)
    message = frame.get("message")
    return cls(str(message)[:300] if isinstance(message, str) and message else None)


def normalize_pin(pin: str) -> str:
    """Accept what people type ("123 456", "123-456") and return six digits."""
    digits = "".join(ch for ch in pin if ch not in " -")
    if len(digits) != 6 or not digits.isascii() or not digits.isdigit():
        raise InvalidPin()
    return digits


# -- frames -----------------------------------------------------------------


async def write_frame(writer: asyncio.StreamWriter, frame: JsonObject) -> None:
    data = json.dumps(frame, separators=(",", ":")).encode("utf-8")
    writer.write(struct.pack(">I", len(data)) + data)
    await writer.drain()


async def read_frame(reader: asyncio.StreamReader) -> JsonObject:
    """Read one frame; an error frame is raised as its ``PairingError``."""
    try:
        (length,) = struct.unpack(">I", await reader.readexactly(4))
        if length > MAX_FRAME:
            raise PairingProtocolError("pairing frame too large")
        frame = json.loads((await reader.readexactly(length)).decode("utf-8"))
    except asyncio.IncompleteReadError as exc:
        raise PairingProtocolError("the other node closed the connection") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise PairingProtocolError("malformed pairing frame") from exc
    if not isinstance(frame, dict):
        raise PairingProtocolError("malformed pairing frame")
    if frame.get("type") == "error":
        raise error_from_frame(frame)
    return frame


def expect(frame: JsonObject, kind: str) -> JsonObject:
    if frame.get("type") != kind:
        raise PairingProtocolError(f"expected a {kind} frame, got {str(frame.get('type'))[:40]!r}")
    return frame


# -- hello ------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    node_id: str
    name: str
    cert_pem: str
    fingerprint: str

    def frame(self) -> JsonObject:
        return {
            "type": "hello",
            "proto": PROTO,
            "node_id": self.node_id,
            "name": self.name,
            "cert_pem": self.cert_pem,
        }

    @classmethod
    def of(cls, identity: NodeIdentity) -> Hello:
        return cls(identity.node_id, identity.name, identity.cert_pem, identity.fingerprint)

    @classmethod
    def parse(cls, frame: JsonObject) -> Hello:
        expect(frame, "hello")
        if frame.get("proto") != PROTO:
            raise PairingProtocolError(f"unsupported pairing protocol {str(frame.get('proto'))[:40]!r}")
        try:
            node_id = str(uuid.UUID(str(frame["node_id"])))
            name, cert_pem = frame["name"], frame["cert_pem"]
            if not isinstance(name, str) or not isinstance(cert_pem, str) or len(name) > MAX_NAME:
                raise TypeError("bad name or certificate")
            fingerprint = check_cert_for_node(cert_pem, node_id)
        except (KeyError, ValueError, TypeError, TrustStoreError) as exc:
            raise PairingProtocolError(f"invalid hello: {exc}") from exc
        return cls(node_id, name, cert_pem, fingerprint)


def pairing_context(purpose: int, identity: NodeIdentity, peer_cert_pem: str) -> ssl.SSLContext:
    """Mutual TLS 1.3 whose only trust anchor is the certificate the peer claimed in its hello."""
    ctx = ssl.SSLContext(purpose)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(identity.cert_path, identity.key_path)
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(cadata=peer_cert_pem)
    return ctx


async def upgrade(
    writer: asyncio.StreamWriter, identity: NodeIdentity, peer: Hello, *, server_side: bool
) -> str:
    """Step 2: upgrade to TLS against the claimed certificate; returns the fingerprint seen.

    The joiner checks the hostname as the inviter's UUID. The fingerprint is
    taken from the session, not the hello: a chain signed by the claimed
    (CA:TRUE) certificate would verify, but must not count as that certificate.
    """
    if server_side:
        await writer.start_tls(pairing_context(ssl.PROTOCOL_TLS_SERVER, identity, peer.cert_pem),
                               ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S)
    else:
        ctx = pairing_context(ssl.PROTOCOL_TLS_CLIENT, identity, peer.cert_pem)
        await writer.start_tls(ctx, server_hostname=peer_hostname(peer.node_id),
                               ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S)
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    seen = fingerprint_of_der(der) if der else None
    if seen != peer.fingerprint:
        raise PairingProtocolError("the TLS certificate differs from the one announced")
    return seen


def parse_spake(frame: JsonObject) -> tuple[bytes, str | None]:
    expect(frame, "spake")
    try:
        msg = base64.b64decode(str(frame["msg"]), validate=True)
    except (KeyError, ValueError) as exc:
        raise PairingProtocolError("invalid SPAKE2 message") from exc
    address = frame.get("address")
    if address is not None and (not isinstance(address, str) or len(address) > 300):
        raise PairingProtocolError("invalid address")
    return msg, address


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# -- key confirmation -------------------------------------------------------


class SpakeSide(Protocol):
    """A SPAKE2 side of the ``spake2`` package (it ships no types): what ``finish_spake`` calls."""

    def finish(self, inbound_message: bytes) -> bytes: ...


def finish_spake(spake: SpakeSide, their_msg: bytes) -> bytes:
    """The SPAKE2 shared key; a malformed message is a protocol error, not a guess."""
    from spake2 import SPAKEError  # loaded already: ``spake`` is one of its objects

    try:
        key: bytes = spake.finish(their_msg)
    except (SPAKEError, ValueError) as exc:
        raise PairingProtocolError("invalid SPAKE2 message") from exc
    return key


@dataclass(frozen=True)
class Side:
    """One node as the *local* side saw it: the fingerprint comes from the TLS session."""

    node_id: str
    name: str
    fingerprint: str
    spake_msg: bytes
    address: str | None

    @classmethod
    def local(cls, identity: NodeIdentity, spake_msg: bytes, address: str | None) -> Side:
        return cls(identity.node_id, identity.name, identity.fingerprint, spake_msg, address)


def transcript(joiner: Side, inviter: Side) -> bytes:
    def side(s: Side) -> JsonObject:
        return {
            "node_id": s.node_id,
            "name": s.name,
            "fingerprint": s.fingerprint,
            "spake": b64(s.spake_msg),
            "address": s.address,
        }

    doc = {"proto": PROTO, "joiner": side(joiner), "inviter": side(inviter)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")).digest()


def confirmation(key: bytes, role: str, transcript_hash: bytes) -> str:
    """MAC proving knowledge of the SPAKE2 key (hence the PIN) over the transcript."""
    mac_key = HKDFExpand(hashes.SHA256(), 32, f"{PROTO} confirm {role}".encode()).derive(key)
    return hmac.new(mac_key, transcript_hash, hashlib.sha256).hexdigest()


def confirmation_ok(expected: str, frame: JsonObject) -> bool:
    mac = expect(frame, "confirm").get("mac")
    return isinstance(mac, str) and hmac.compare_digest(
        expected.encode("ascii"), mac.encode("ascii", "replace")
    )


# -- addresses --------------------------------------------------------------


def resolve_address(advertised: str | None, observed_host: str | None) -> str | None:
    """Fill a wildcard or empty host in ``advertised`` ("0.0.0.0:14330", ":14330")
    with the host this connection actually came from, since a node bound to all
    interfaces does not know which of its addresses the peer can reach."""
    if not advertised:
        return None
    host, sep, port = advertised.rpartition(":")
    if not sep or not port.isdigit():
        return advertised
    if not is_wildcard(host) or not observed_host:
        return advertised
    shown = f"[{observed_host}]" if ":" in observed_host else observed_host
    return f"{shown}:{port}"


def default_advertise_host() -> str:
    """A guess at this machine's LAN address, for showing where to dial."""
    # Connecting a UDP socket sends nothing; it only asks the kernel which local
    # address would route outward.
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            return str(s.getsockname()[0])
    except OSError:
        return socket.gethostname()


def is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return host.strip("[]") == ""
