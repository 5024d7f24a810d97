"""mDNS: announce this node as ``_pairwise._tcp`` and find paired peers again.

The record carries only the node UUID and the cluster port (TXT ``id`` and
``port``); everything else travels over the pinned cluster port. A browsed
record proves nothing: it only offers addresses, which the peer manager
tries with that peer's pinned certificate, and only while the peer is
offline. Off with ``--no-mdns`` or ``PAIRWISE_MDNS=off``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
from collections.abc import Callable, Mapping

from zeroconf import IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

log = logging.getLogger(__name__)

SERVICE = "_pairwise._tcp.local."
RESOLVE_TIMEOUT_MS = 3000

OnFound = Callable[[str, list[str]], None]


def instance_name(name: str, node_id: str) -> str:
    """A DNS-SD instance label: readable, unique by the UUID prefix, at most 63 bytes."""
    safe = re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-")[:40] or "node"
    return f"{safe}-{node_id[:8]}"


def local_addresses(bind_host: str) -> list[str]:
    """IPv4 addresses to announce (mDNS runs on IPv4): the bound one, or every
    non-loopback one for a wildcard bind."""
    try:
        bound = ipaddress.ip_address(bind_host.strip("[]"))
    except ValueError:
        bound = None
    if bound is not None and not bound.is_unspecified:
        return [str(bound)]
    import ifaddr

    found: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str):  # IPv6 entries are tuples
                address = ipaddress.ip_address(ip.ip)
                if not address.is_loopback and not address.is_link_local:
                    found.append(str(address))
    return found


def format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Discovery:
    def __init__(self, node_id: str, name: str, bind_host: str, cluster_port: int, on_found: OnFound) -> None:
        self.node_id, self.name = node_id, name
        self.bind_host, self.cluster_port = bind_host, cluster_port
        self.on_found = on_found
        self._zc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        addresses = local_addresses(self.bind_host)
        self._zc = AsyncZeroconf(ip_version=IPVersion.V4Only)
        info = AsyncServiceInfo(
            SERVICE, f"{instance_name(self.name, self.node_id)}.{SERVICE}",
            port=self.cluster_port, properties={"id": self.node_id, "port": str(self.cluster_port)},
            parsed_addresses=addresses, server=f"pairwise-{self.node_id[:8]}.local.",
        )
        await self._zc.async_register_service(info, allow_name_change=True)
        self._browser = AsyncServiceBrowser(self._zc.zeroconf, SERVICE, handlers=[self._on_change])
        log.info("mDNS: announcing %s on %s port %d", SERVICE, ", ".join(addresses) or "no address",
                 self.cluster_port)

    def _on_change(self, zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        if state_change in (ServiceStateChange.Added, ServiceStateChange.Updated):
            task = asyncio.ensure_future(self._resolve(name))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _resolve(self, name: str) -> None:
        if self._zc is None:
            return
        info = AsyncServiceInfo(SERVICE, name)
        if not await info.async_request(self._zc.zeroconf, RESOLVE_TIMEOUT_MS):
            return
        props = decode_properties(info.properties)
        node_id = props.get("id")
        port_text = props.get("port") or str(info.port or "")
        if not node_id or node_id == self.node_id or not port_text.isdigit():
            return
        port = int(port_text)
        addresses = [format_address(a, port) for a in info.parsed_addresses()]
        if addresses:
            self.on_found(node_id, addresses)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._browser is not None:
            await self._browser.async_cancel()
        if self._zc is not None:
            await self._zc.async_unregister_all_services()
            await self._zc.async_close()
        self._zc = self._browser = None


def decode_properties(properties: Mapping[bytes, bytes | None]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in properties.items():
        k = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)
        if isinstance(value, bytes):
            out[k] = value.decode("utf-8", "replace")
        elif value is not None:
            out[k] = str(value)
    return out
