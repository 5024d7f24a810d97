"""This node's cluster identity: a random UUID and a self-signed certificate.

Layout of the identity directory (0700)::

    node.key   PKCS#8 PEM, ECDSA P-256, mode 0600
    node.crt   self-signed certificate, public
    node.json  {"node_id", "name", "fingerprint"}; written last, so it marks a complete identity

The certificate's SAN is ``<uuid>.node.pairwise``: peers connect with
``server_hostname`` set to that name and keep ``check_hostname`` on, so a
pinned certificate must also name the node UUID they meant to reach.
CA:TRUE lets the certificate be its own trust anchor in ``cadata``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.services.errors import PairwiseError
from app.services.platform.files import replace_file
from app.services.platform.permissions import tighten, tighten_fd

NODE_DOMAIN = "node.pairwise"
CERT_VALIDITY = dt.timedelta(days=3650)
KEY_FILE = "node.key"
CERT_FILE = "node.crt"
META_FILE = "node.json"


class IdentityError(PairwiseError):
    title = "Node identity problem"
    status = 500


def peer_hostname(node_id: str) -> str:
    """The TLS hostname a node's certificate is issued for: ``<uuid>.node.pairwise``."""
    return f"{uuid.UUID(node_id)}.{NODE_DOMAIN}"


def fingerprint_of_der(der: bytes) -> str:
    """SHA-256 of a DER certificate, lowercase hex without colons."""
    return hashlib.sha256(der).hexdigest()


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new file, never half of one.

    The temp file is created with its final mode before any byte is written,
    so a private key is never readable by others, not even for a moment.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        tighten_fd(fd, mode)  # POSIX modes; on Windows the user's profile ACLs protect the file
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        replace_file(tmp, path)  # waits out a reader holding the old file (Windows)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform (Windows).
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _make_certificate(node_id: str, name: str, key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name[:64] or node_id)])
    now = dt.datetime.now(dt.UTC)
    public = key.public_key()
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        # Backdated a little so a peer whose clock runs slightly behind accepts it at once.
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + CERT_VALIDITY)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(peer_hostname(node_id))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )


@dataclass(frozen=True)
class NodeIdentity:
    node_id: str
    name: str
    cert_pem: str
    cert_path: Path
    key_path: Path
    fingerprint: str

    @property
    def hostname(self) -> str:
        return peer_hostname(self.node_id)

    @classmethod
    def load_or_create(cls, directory: Path, name: str) -> NodeIdentity:
        """Load the identity in ``directory``, or make one at first start.

        ``name`` is a display name: a later rename updates node.json but keeps
        the certificate, because a new certificate would break every peer's pin.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        _restrict(directory, 0o700)
        if (directory / META_FILE).exists():
            return cls._load(directory, name)
        return cls._create(directory, name)

    @classmethod
    def _create(cls, directory: Path, name: str) -> NodeIdentity:
        node_id = str(uuid.uuid4())
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _make_certificate(node_id, name, key)
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        cert_der = cert.public_bytes(serialization.Encoding.DER)
        cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode("ascii")
        fingerprint = fingerprint_of_der(cert_der)
        # Key and certificate first, node.json last: a crash in between leaves no
        # node.json, and the next start simply makes a fresh identity.
        atomic_write(directory / KEY_FILE, key_pem, 0o600)
        atomic_write(directory / CERT_FILE, cert_pem.encode("ascii"), 0o644)
        cls._write_meta(directory, node_id, name, fingerprint)
        return cls(node_id, name, cert_pem, directory / CERT_FILE, directory / KEY_FILE, fingerprint)

    @classmethod
    def _load(cls, directory: Path, name: str) -> NodeIdentity:
        key_path, cert_path = directory / KEY_FILE, directory / CERT_FILE
        try:
            meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
            node_id = str(uuid.UUID(meta["node_id"]))
            cert_pem = cert_path.read_text(encoding="ascii")
            key_pem = key_path.read_bytes()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # Never silently mint a new identity here: that would orphan every pin peers hold.
            raise IdentityError(
                f"the node identity in {directory} is incomplete or unreadable: {exc}"
            ) from exc
        _restrict(key_path, 0o600)
        try:
            cert = x509.load_pem_x509_certificate(cert_pem.encode("ascii"))
            key = serialization.load_pem_private_key(key_pem, password=None)
        except ValueError as exc:
            raise IdentityError(f"the node certificate or key in {directory} is damaged: {exc}") from exc
        if key.public_key() != cert.public_key():
            raise IdentityError(f"the node key in {directory} does not belong to its certificate")
        if peer_hostname(node_id) not in cert_dns_names(cert):
            raise IdentityError(f"the node certificate in {directory} is not issued for node {node_id}")
        fingerprint = fingerprint_of_der(cert.public_bytes(serialization.Encoding.DER))
        if meta.get("name") != name or meta.get("fingerprint") != fingerprint:
            cls._write_meta(directory, node_id, name, fingerprint)
        return cls(node_id, name, cert_pem, cert_path, key_path, fingerprint)

    @staticmethod
    def _write_meta(directory: Path, node_id: str, name: str, fingerprint: str) -> None:
        meta = {"node_id": node_id, "name": name, "fingerprint": fingerprint}
        atomic_write(directory / META_FILE, (json.dumps(meta, indent=2) + "\n").encode("utf-8"), 0o644)


def cert_dns_names(cert: x509.Certificate) -> list[str]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return san.get_values_for_type(x509.DNSName)


def _restrict(path: Path, mode: int) -> None:
    # Tightens a key or directory that someone loosened (a restore from backup, a copy).
    tighten(path, mode)
