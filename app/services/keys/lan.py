"""The LAN door: a second front door for other devices of the LAN, HTTPS only, keys required.

Off by default; opened by ``pairwise serve --lan-listen ADDR:PORT``, ``pairwise lan on ADDR:PORT``
or the Settings switch (the address is kept in the node's settings as ``lan_listen``).

Why HTTPS and not plain HTTP: a key in an ``Authorization`` header would cross the LAN in the
clear, readable by anyone on the same Wi-Fi. The door's certificate is issued at every start by
the node's own certificate (the cluster identity, CA:TRUE, path length 0) for this machine's names
and addresses, so a client pins one thing that never changes: the node certificate
(``pairwise lan cert`` prints it, with its SHA-256 fingerprint), used as the client's CA file.
The openai client takes it as ``http_client=httpx.Client(verify=ssl.create_default_context(
cafile="node.pem"))`` and the ollama client as ``Client(host=..., verify=<the same context>)``;
hostname checking stays on, so the address the client uses must be one the certificate names
(every address of this machine when it was issued, and the bound address).

Public API: ``LanDoor(node, keys)``: ``await start(listen)``, ``await stop()``, ``status()``,
``address``; ``issue_door_certificate(identity, hosts) -> (cert_pem, key_pem)``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import socket
import ssl
from typing import TYPE_CHECKING

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.home import write_private
from app.services.cluster.identity import NodeIdentity, atomic_write
from app.services.errors import ConfigError
from app.services.frontdoor.server import build_frontdoor
from app.services.keys.auth import FailedAttempts, required_key
from app.services.keys.store import KeyStore
from app.services.listener_budget import HEADER_TIMEOUT_S, BudgetedSite, cluster_budget
from app.settings import parse_host_port

if TYPE_CHECKING:
    from app.services.api.snapshots import LanStatus
    from app.services.keys.context import LanNode

log = logging.getLogger(__name__)
DOOR_CERT_FILE = "lan_door.crt"
DOOR_KEY_FILE = "lan_door.key"
DOOR_VALIDITY = dt.timedelta(days=365)


def machine_names(bound_host: str) -> tuple[list[str], list[str]]:
    """DNS names and IP addresses this machine answers to (for the door certificate's SAN)."""
    hostname = socket.gethostname()
    names = {"localhost", hostname, f"{hostname}.local"}
    addresses = {"127.0.0.1", "::1"}
    try:
        addresses.add(str(ipaddress.ip_address(bound_host)))
    except ValueError:
        if bound_host:
            names.add(bound_host)
    try:
        for info in socket.getaddrinfo(hostname, None):
            addresses.add(str(info[4][0]).split("%", 1)[0])
    except OSError:
        pass
    try:  # the address of the default route (no packet is sent by a UDP connect)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            addresses.add(probe.getsockname()[0])
    except OSError:
        pass
    usable = [a for a in addresses if not ipaddress.ip_address(a).is_unspecified]
    return sorted(n for n in names if n), sorted(usable)


def issue_door_certificate(identity: NodeIdentity, names: list[str], addresses: list[str]) -> tuple[bytes, bytes]:
    """A server certificate for the door, signed by the node's key: (certificate PEM, key PEM)."""
    issuer_cert = x509.load_pem_x509_certificate(identity.cert_pem.encode("ascii"))
    issuer_key = serialization.load_pem_private_key(identity.key_path.read_bytes(), password=None)
    if not isinstance(issuer_key, ec.EllipticCurvePrivateKey):
        raise ConfigError("the node key is not an EC key; the LAN door cannot issue its certificate")
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    san: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
    san += [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{identity.name[:40]} LAN door")]))
        .issuer_name(issuer_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + DOOR_VALIDITY)
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
        .sign(issuer_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


class LanDoor:
    def __init__(self, node: LanNode, keys: KeyStore) -> None:
        self.node, self.keys = node, keys
        self.throttle = FailedAttempts()
        self.address = ""
        self._runner: web.AppRunner | None = None
        self._site: BudgetedSite | None = None
        self.error: str | None = None  # why the door is not open although it should be

    @property
    def on(self) -> bool:
        return self._runner is not None

    async def start(self, listen: str) -> None:
        host, port = parse_host_port(listen)
        await self.stop()
        identity = self.node.identity
        names, addresses = machine_names(host)
        cert_pem, key_pem = issue_door_certificate(identity, names, addresses)
        cert_path, key_path = identity.cert_path.parent / DOOR_CERT_FILE, identity.cert_path.parent / DOOR_KEY_FILE
        write_private(key_path, key_pem)
        atomic_write(cert_path, cert_pem, 0o644)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(cert_path, key_path)
        app = build_frontdoor(self.node, lan_door=required_key(self.keys, self.throttle))
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None, keepalive_timeout=HEADER_TIMEOUT_S)
        await runner.setup()
        # Other machines call here: the cluster port's budget (per-address caps, handshake limits).
        site = BudgetedSite(runner, host, port, cluster_budget(self.node.open_files), label="LAN door",
                            ssl_context=context)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ConfigError(f"the LAN door could not listen on {listen}: {exc.strerror or exc}") from exc
        bound = site.bound or (host, port)
        self.address = f"{bound[0]}:{bound[1]}"
        self._runner, self._site, self.error = runner, site, None
        self.node.listener_sites.append(site)
        log.info("LAN door open on https://%s (keys required)", self.address)

    async def stop(self) -> None:
        runner, self._runner, self.address, self.error = self._runner, None, "", None
        if self._site in self.node.listener_sites:
            self.node.listener_sites.remove(self._site)
        self._site = None
        if runner is not None:
            await runner.cleanup()
            log.info("LAN door closed")

    def status(self) -> LanStatus:
        return {"on": self.on, "listen": self.node.settings.lan_listen, "address": self.address,
                "url": f"https://{self.address}" if self.address else None, "scheme": "https",
                "fingerprint": self.node.identity.fingerprint, "keys": self.keys.count_active(), "error": self.error}
