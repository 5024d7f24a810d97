"""Pins of paired peers, keyed by node UUID, in one JSON file.

Certificates are public, so the file needs no secrecy, only integrity:
every write is atomic, and on load each pin's fingerprint is recomputed from
its PEM and must match, and the certificate must be issued for the pin's
node UUID. A file that fails these checks is refused as a whole rather than
partly trusted, because it is the root of the cluster's trust.

Listeners (``add_listener``) hear about every change, so TLS contexts built
from the pins can follow without polling.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from app.services.cluster.identity import atomic_write, cert_dns_names, fingerprint_of_der, peer_hostname
from app.services.errors import PairwiseError
from app.services.json_types import JsonObject

FILE_VERSION = 1


class TrustStoreError(PairwiseError):
    title = "Cluster trust store problem"
    status = 500


def fingerprint_of_pem(pem: str) -> str:
    """SHA-256 of the certificate's DER form, lowercase hex without colons."""
    try:
        cert = x509.load_pem_x509_certificate(pem.encode("ascii"))
    except ValueError as exc:
        raise TrustStoreError(f"not a PEM certificate: {exc}") from exc
    return fingerprint_of_der(cert.public_bytes(serialization.Encoding.DER))


def check_cert_for_node(pem: str, node_id: str) -> str:
    """Check that ``pem`` is a certificate issued for ``node_id``; returns its fingerprint.

    Peers verify the hostname ``<uuid>.node.pairwise``, so a pin whose
    certificate names another UUID could never be used, or worse, could stand
    in for another node.
    """
    try:
        cert = x509.load_pem_x509_certificate(pem.encode("ascii"))
        wanted = peer_hostname(node_id)
    except ValueError as exc:
        raise TrustStoreError(f"bad certificate or node id: {exc}") from exc
    if wanted not in cert_dns_names(cert):
        raise TrustStoreError(f"the certificate is not issued for node {node_id}")
    return fingerprint_of_der(cert.public_bytes(serialization.Encoding.DER))


@dataclass(frozen=True)
class PeerPin:
    node_id: str
    name: str
    cert_pem: str
    fingerprint: str
    address: str | None
    paired_at: dt.datetime

    @classmethod
    def create(cls, node_id: str, name: str, cert_pem: str, address: str | None) -> PeerPin:
        """A fresh pin; the fingerprint is computed, never taken on trust."""
        node_id = str(uuid.UUID(node_id))
        fingerprint = check_cert_for_node(cert_pem, node_id)
        return cls(node_id, name, cert_pem, fingerprint, address, dt.datetime.now(dt.UTC))

    def to_json(self) -> JsonObject:
        return {
            "node_id": self.node_id,
            "name": self.name,
            "cert_pem": self.cert_pem,
            "fingerprint": self.fingerprint,
            "address": self.address,
            "paired_at": self.paired_at.isoformat(),
        }

    @classmethod
    def from_json(cls, key: str, data: JsonObject) -> PeerPin:
        try:
            node_id = str(uuid.UUID(str(data["node_id"])))
            cert_pem = str(data["cert_pem"])
            stored = str(data["fingerprint"]).lower()
            address = data.get("address")
            paired_at = dt.datetime.fromisoformat(str(data["paired_at"]))
            name = str(data["name"])
        except (KeyError, ValueError, TypeError) as exc:
            raise TrustStoreError(f"pin {key!r} is malformed: {exc}") from exc
        if node_id != key:
            raise TrustStoreError(f"pin {key!r} is filed under the wrong node id ({node_id})")
        actual = check_cert_for_node(cert_pem, node_id)
        if actual != stored:
            raise TrustStoreError(f"pin {key!r}: fingerprint does not match its certificate")
        if address is not None and not isinstance(address, str):
            raise TrustStoreError(f"pin {key!r}: address must be a string")
        if paired_at.tzinfo is None:
            paired_at = paired_at.replace(tzinfo=dt.UTC)
        return cls(node_id, name, cert_pem, actual, address, paired_at)


class TrustStore:
    """The pinned peers of this node; one instance per node process."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._pins: dict[str, PeerPin] = {}
        self._listeners: list[Callable[[], None]] = []
        self._load()

    def _load(self) -> None:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        try:
            doc = json.loads(raw)
            peers = doc["peers"]
            if not isinstance(peers, dict):
                raise TypeError("peers must be an object")
        except (ValueError, KeyError, TypeError) as exc:
            raise TrustStoreError(f"{self.path} is not a valid trust store: {exc}") from exc
        self._pins = {key: PeerPin.from_json(key, value) for key, value in peers.items()}

    def _save(self) -> None:
        doc = {"version": FILE_VERSION, "peers": {k: p.to_json() for k, p in sorted(self._pins.items())}}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(self.path, (json.dumps(doc, indent=2) + "\n").encode("utf-8"), 0o600)
        for listener in list(self._listeners):
            listener()

    def add_listener(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every change (add, remove, address update)."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def add(self, pin: PeerPin) -> None:
        """Pin a peer (replacing any earlier pin for the same node UUID)."""
        if check_cert_for_node(pin.cert_pem, pin.node_id) != pin.fingerprint:
            raise TrustStoreError(f"pin for {pin.node_id}: fingerprint does not match its certificate")
        self._pins[pin.node_id] = pin
        self._save()

    def remove(self, node_id: str) -> PeerPin | None:
        pin = self._pins.pop(node_id, None)
        if pin is not None:
            self._save()
        return pin

    def get(self, node_id: str) -> PeerPin | None:
        return self._pins.get(node_id)

    def all(self) -> list[PeerPin]:
        return sorted(self._pins.values(), key=lambda p: p.node_id)

    def by_fingerprint(self, fingerprint: str) -> PeerPin | None:
        wanted = fingerprint.lower().replace(":", "")
        for pin in self._pins.values():
            if pin.fingerprint == wanted:
                return pin
        return None

    def update_address(self, node_id: str, address: str | None) -> PeerPin:
        pin = self._pins.get(node_id)
        if pin is None:
            raise KeyError(node_id)
        if pin.address != address:
            pin = replace(pin, address=address)
            self._pins[node_id] = pin
            self._save()
        return pin

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._pins

    def __len__(self) -> int:
        return len(self._pins)
