"""Before a node starts: its listeners' addresses are free, or one paragraph says who holds them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.errors import PortTaken
from app.services.firstrun.adopt import remember_ollama_move
from app.services.firstrun.explain import (
    CLUSTER,
    FRONT_DOOR,
    front_door_taken,
    listener_taken,
    moved_ollama_address,
)
from app.services.firstrun.holder import identify_holder
from app.services.platform.sockets import port_is_free
from app.settings import parse_host_port

if TYPE_CHECKING:
    from app.home import Home
    from app.settings import NodeSettings


async def explain_taken(role: str, address: str, home: Home | None = None) -> PortTaken:
    """Who holds ``address`` and the way on; for Ollama on the front door, the promise to adopt it is noted."""
    host, port = parse_host_port(address)
    holder = await identify_holder(host, port)
    if role != FRONT_DOOR:
        return listener_taken(role, address, holder)
    if holder.kind == "ollama" and home is not None:
        remember_ollama_move(home, address, moved_ollama_address(address))
    return front_door_taken(address, holder)


def frontdoor_free(settings: NodeSettings) -> bool:
    host, port = parse_host_port(settings.listen)
    return port == 0 or port_is_free(host, port)


async def preflight(settings: NodeSettings, home: Home, *, frontdoor: bool, cluster: bool) -> None:
    """Raise PortTaken for the first of the node's addresses that another program holds."""
    checks = [(FRONT_DOOR, settings.listen)] if frontdoor else []
    if cluster:
        checks.append((CLUSTER, settings.cluster_listen))
    for role, address in checks:
        host, port = parse_host_port(address)
        if port and not port_is_free(host, port):
            raise await explain_taken(role, address, home)
