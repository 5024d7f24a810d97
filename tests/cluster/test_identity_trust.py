from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from app.services.cluster.identity import IdentityError, NodeIdentity, peer_hostname
from app.services.cluster.trust import PeerPin, TrustStore, TrustStoreError, fingerprint_of_pem
from tests.cluster.conftest import Node, forge_identity


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_identity_first_start(tmp_path: Path) -> None:
    ident = NodeIdentity.load_or_create(tmp_path / "id", "kitchen")
    assert uuid.UUID(ident.node_id).version == 4
    assert mode(ident.key_path) == 0o600
    assert mode(tmp_path / "id") == 0o700
    assert not [p for p in (tmp_path / "id").iterdir() if p.name.endswith(".tmp")]

    cert = x509.load_pem_x509_certificate(ident.cert_pem.encode())
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "kitchen"
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == [f"{ident.node_id}.node.pairwise"]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    life = cert.not_valid_after_utc - dt.datetime.now(dt.UTC)
    assert dt.timedelta(days=3640) < life <= dt.timedelta(days=3651)
    der = cert.public_bytes(serialization.Encoding.DER)
    assert ident.fingerprint == hashlib.sha256(der).hexdigest()
    assert ident.cert_path.read_text() == ident.cert_pem
    assert ident.hostname == peer_hostname(ident.node_id)


def test_key_is_private_before_it_lands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modes: dict[str, int] = {}
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        modes[Path(dst).name] = mode(Path(src))  # the temp file, already holding the bytes
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    NodeIdentity.load_or_create(tmp_path, "a")
    assert modes["node.key"] == 0o600


def test_identity_reload_is_the_same(tmp_path: Path) -> None:
    first = NodeIdentity.load_or_create(tmp_path, "a")
    again = NodeIdentity.load_or_create(tmp_path, "a")
    assert again == first
    renamed = NodeIdentity.load_or_create(tmp_path, "b")
    # A rename is display only: a new certificate would break every peer's pin.
    assert (renamed.node_id, renamed.fingerprint, renamed.name) == (first.node_id, first.fingerprint, "b")
    assert json.loads((tmp_path / "node.json").read_text())["name"] == "b"


def test_identity_key_mode_tightened_on_load(tmp_path: Path) -> None:
    ident = NodeIdentity.load_or_create(tmp_path, "a")
    os.chmod(ident.key_path, 0o644)
    NodeIdentity.load_or_create(tmp_path, "a")
    assert mode(ident.key_path) == 0o600


def test_identity_incomplete_is_an_error_not_a_new_identity(tmp_path: Path) -> None:
    ident = NodeIdentity.load_or_create(tmp_path, "a")
    ident.key_path.unlink()
    with pytest.raises(IdentityError, match="incomplete"):
        NodeIdentity.load_or_create(tmp_path, "a")


def test_identity_foreign_key_refused(tmp_path: Path) -> None:
    ident = NodeIdentity.load_or_create(tmp_path / "a", "a")
    other = NodeIdentity.load_or_create(tmp_path / "b", "b")
    ident.key_path.write_bytes(other.key_path.read_bytes())
    with pytest.raises(IdentityError, match="does not belong"):
        NodeIdentity.load_or_create(tmp_path / "a", "a")


def test_trust_store_roundtrip(make_node: Callable[[str], Node], tmp_path: Path) -> None:
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    seen: list[int] = []
    a.trust.add_listener(lambda: seen.append(len(a.trust)))
    pin_b = PeerPin.create(b.identity.node_id, "b", b.identity.cert_pem, "10.0.0.2:14330")
    a.trust.add(pin_b)
    a.trust.add(PeerPin.create(c.identity.node_id, "c", c.identity.cert_pem, None))
    assert pin_b.fingerprint == b.identity.fingerprint == fingerprint_of_pem(b.identity.cert_pem)
    assert a.trust.get(b.identity.node_id) == pin_b
    assert a.trust.by_fingerprint(c.identity.fingerprint).node_id == c.identity.node_id  # type: ignore[union-attr]
    a.trust.update_address(c.identity.node_id, "10.0.0.3:14330")
    assert mode(a.trust.path) == 0o600

    reloaded = TrustStore(a.trust.path)
    assert reloaded.all() == a.trust.all()
    assert reloaded.get(c.identity.node_id).address == "10.0.0.3:14330"  # type: ignore[union-attr]
    assert reloaded.remove(b.identity.node_id) == pin_b
    assert TrustStore(a.trust.path).get(b.identity.node_id) is None
    assert seen == [1, 2, 2]


def test_trust_store_refuses_tampered_fingerprint(make_node: Callable[[str], Node]) -> None:
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    a.trust.add(PeerPin.create(b.identity.node_id, "b", b.identity.cert_pem, None))
    doc = json.loads(a.trust.path.read_text())
    doc["peers"][b.identity.node_id]["cert_pem"] = c.identity.cert_pem
    a.trust.path.write_text(json.dumps(doc))
    with pytest.raises(TrustStoreError):
        TrustStore(a.trust.path)


def test_pin_must_name_its_node(make_node: Callable[[str], Node], tmp_path: Path) -> None:
    b = make_node("b")
    with pytest.raises(TrustStoreError, match="not issued for node"):
        PeerPin.create(str(uuid.uuid4()), "b", b.identity.cert_pem, None)
    forged = forge_identity(tmp_path / "forged", b.identity.node_id, "b")
    # A cert may claim any UUID; only pairing decides which one we pin.
    assert PeerPin.create(b.identity.node_id, "x", forged.cert_pem, None).fingerprint == forged.fingerprint
