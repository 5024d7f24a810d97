"""The LAN door: a second front door for other devices of the LAN, HTTPS only, keys required.

Off by default; opened by ``pairwise serve --lan-listen ADDR:PORT``, ``pairwise lan on ADDR:PORT``
or the Settings switch (the address is kept in the node's settings as ``lan_listen``).

Why HTTPS and not plain HTTP: a key in an ``Authorization`` header would cross the LAN in the
clear, readable by anyone on the same Wi-Fi. The door's certificate is issued at every start by
the door's own CA (``door_ca.py``: CA:TRUE, path length 0, name-constrained to this machine's names
and LAN addresses, so adding it to a general trust store trusts it for nothing else), and a client
pins one thing that stays: that CA (``pairwise lan cert`` prints it, with its SHA-256 fingerprint),
used as the client's CA file.
The openai client takes it as ``http_client=httpx.Client(verify=ssl.create_default_context(
cafile="node.pem"))`` and the ollama client as ``Client(host=..., verify=<the same context>)``;
hostname checking stays on, so the address the client uses must be one the certificate names
(every address of this machine when it was issued, and the bound address).

Public API: ``LanDoor(node, keys)``: ``await start(listen)``, ``await stop()``, ``status()``,
``address``, ``pin() -> {"pem", "fingerprint"}``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import socket
import ssl
from typing import TYPE_CHECKING

from aiohttp import web

from app.home import save_private
from app.services.cluster.identity import atomic_write
from app.services.errors import ConfigError
from app.services.frontdoor.server import build_frontdoor
from app.services.keys.auth import FailedAttempts, required_key
from app.services.keys.door_ca import DoorCa
from app.services.keys.store import KeyStore
from app.services.listener_budget import HEADER_TIMEOUT_S, BudgetedSite, cluster_budget
from app.settings import parse_host_port

if TYPE_CHECKING:
    from app.services.api.snapshots import DoorCert, LanStatus
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


class LanDoor:
    def __init__(self, node: LanNode, keys: KeyStore) -> None:
        self.node, self.keys = node, keys
        self.throttle = FailedAttempts()
        self.address = ""
        self._runner: web.AppRunner | None = None
        self._site: BudgetedSite | None = None
        self.error: str | None = None  # why the door is not open although it should be
        self.ca: DoorCa | None = None

    @property
    def on(self) -> bool:
        return self._runner is not None

    async def start(self, listen: str) -> None:
        host, port = parse_host_port(listen)
        await self.stop()
        identity = self.node.identity
        names, addresses = machine_names(host)
        directory = identity.cert_path.parent
        self.ca = DoorCa.load_or_create(directory, identity.name, names, addresses)
        cert_pem, key_pem = self.ca.issue(names, addresses)
        cert_path, key_path = directory / DOOR_CERT_FILE, directory / DOOR_KEY_FILE
        save_private(key_path, key_pem, "the LAN door's key")
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

    def pin(self) -> DoorCert:
        """What LAN clients pin: the door's name-constrained CA (made now if the door never opened)."""
        if self.ca is None:
            listen = self.node.settings.lan_listen
            names, addresses = machine_names(parse_host_port(listen)[0] if listen else "")
            identity = self.node.identity
            self.ca = DoorCa.load_or_create(identity.cert_path.parent, identity.name, names, addresses)
        return {"pem": self.ca.cert_pem, "fingerprint": self.ca.fingerprint}

    def status(self) -> LanStatus:
        return {"on": self.on, "listen": self.node.settings.lan_listen, "address": self.address,
                "url": f"https://{self.address}" if self.address else None, "scheme": "https",
                "fingerprint": self.ca.fingerprint if self.ca is not None else None,
                "keys": self.keys.count_active(), "error": self.error}
