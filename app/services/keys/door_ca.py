"""The LAN door's own CA: what LAN clients pin, constrained to this machine's names and addresses.

A client pins one certificate and uses it as its CA file. Were that the node's cluster certificate
(a CA without name constraints), a client that added it to a general trust store would trust this
node for any host name (bank.example included). So the door has its own CA, kept in the identity
directory (key 0600): CA:TRUE, path length 0, and *name constraints* (critical) permitting only this
machine's names (localhost, its host name, ``<host>.local``) and loopback, link-local and private
address ranges (plus any other address it had when made). A leaf for any other name that this key
signed is refused by every verifier that honours RFC 5280, OpenSSL included.

The CA stays while the machine's names stay (the pin survives restarts and DHCP); a new host name
makes a new CA, said in the log (clients pin again).

Public API: ``DoorCa.load_or_create(directory, node_name, names, addresses)``, ``.issue(names,
addresses) -> (cert_pem, key_pem)``, ``.cert_pem``, ``.fingerprint``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.home import save_private
from app.services.cluster.identity import fingerprint_of_der

log = logging.getLogger(__name__)

CA_CERT_FILE = "lan_door_ca.crt"
CA_KEY_FILE = "lan_door_ca.key"
CA_VALIDITY = dt.timedelta(days=3650)
LEAF_VALIDITY = dt.timedelta(days=365)
# Where a LAN device can be: loopback, link-local, private and carrier-grade NAT (VPN meshes) ranges.
LAN_RANGES = ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10",
              "::1/128", "fc00::/7", "fe80::/10")

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _networks(addresses: list[str]) -> list[IpNetwork]:
    networks: list[IpNetwork] = [ipaddress.ip_network(r) for r in LAN_RANGES]
    for address in addresses:
        ip = ipaddress.ip_address(address)
        if not any(ip in n for n in networks):
            networks.append(ipaddress.ip_network(f"{ip}/{ip.max_prefixlen}"))
    return networks


def _permitted(cert: x509.Certificate) -> tuple[set[str], list[IpNetwork]]:
    try:
        constraints = cert.extensions.get_extension_for_class(x509.NameConstraints).value
    except x509.ExtensionNotFound:
        return set(), []
    subtrees = constraints.permitted_subtrees or []
    names = {g.value.lower() for g in subtrees if isinstance(g, x509.DNSName)}
    nets = [g.value for g in subtrees if isinstance(g, x509.IPAddress) and isinstance(g.value, IpNetwork)]
    return names, nets


@dataclass(frozen=True)
class DoorCa:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def cert_pem(self) -> str:
        return self.cert.public_bytes(serialization.Encoding.PEM).decode("ascii")

    @property
    def fingerprint(self) -> str:
        return fingerprint_of_der(self.cert.public_bytes(serialization.Encoding.DER))

    @classmethod
    def load_or_create(cls, directory: Path, node_name: str, names: list[str], addresses: list[str]) -> DoorCa:
        cert_path, key_path = directory / CA_CERT_FILE, directory / CA_KEY_FILE
        if cert_path.exists() and key_path.exists():
            cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
            key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
            permitted, nets = _permitted(cert)
            covers = {n.lower() for n in names} <= permitted and all(
                any(ipaddress.ip_address(a) in n for n in nets) for a in addresses)
            if isinstance(key, ec.EllipticCurvePrivateKey) and covers and \
                    cert.not_valid_after_utc > dt.datetime.now(dt.UTC) + LEAF_VALIDITY:
                return cls(cert, key)
            log.info("the LAN door's CA does not cover this machine's names now; making a new one "
                     "(LAN clients pin it again: pairwise lan cert)")
        made = cls._make(node_name, names, addresses)
        key_pem = made.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption())
        save_private(key_path, key_pem, "the LAN door's CA key")
        save_private(cert_path, made.cert_pem.encode("ascii"), "the LAN door's CA certificate")
        return made

    @classmethod
    def _make(cls, node_name: str, names: list[str], addresses: list[str]) -> DoorCa:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{node_name[:40]} LAN door CA")])
        permitted: list[x509.GeneralName] = [x509.DNSName(n) for n in sorted({n.lower() for n in names})]
        permitted += [x509.IPAddress(n) for n in _networks(addresses)]
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject).issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + CA_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.NameConstraints(permitted_subtrees=permitted, excluded_subtrees=None), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(cert, key)

    def issue(self, names: list[str], addresses: list[str]) -> tuple[bytes, bytes]:
        """A server certificate for the door, signed by this CA: (certificate PEM, key PEM)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        san: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
        san += [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "LAN door")]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + LEAF_VALIDITY)
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        return cert.public_bytes(serialization.Encoding.PEM), key_pem
