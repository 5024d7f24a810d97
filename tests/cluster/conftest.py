from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from app.services.cluster.identity import NodeIdentity, _make_certificate, atomic_write, fingerprint_of_der
from app.services.cluster.trust import TrustStore


@dataclass
class Node:
    identity: NodeIdentity
    trust: TrustStore


@pytest.fixture
def make_node(tmp_path: Path) -> Callable[[str], Node]:
    def make(name: str) -> Node:
        home = tmp_path / name
        identity = NodeIdentity.load_or_create(home / "identity", name)
        return Node(identity, TrustStore(home / "trust.json"))

    return make


def forge_identity(directory: Path, node_id: str, name: str) -> NodeIdentity:
    """A certificate that claims someone else's node UUID, as an attacker would make."""
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _make_certificate(node_id, name, key)
    key_path, cert_path = directory / "node.key", directory / "node.crt"
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    atomic_write(key_path, key_pem, 0o600)
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode("ascii")
    atomic_write(cert_path, cert_pem.encode("ascii"))
    fingerprint = fingerprint_of_der(cert.public_bytes(serialization.Encoding.DER))
    return NodeIdentity(node_id, name, cert_pem, cert_path, key_path, fingerprint)
