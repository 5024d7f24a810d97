"""What a starting node says about its engines: those it has, or (with none) what it found to adopt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.firstrun.adopt import not_adopted
from app.services.firstrun.discover import FoundEngine, describe, discover

if TYPE_CHECKING:
    from app.services.node import Node


async def offers(node: Node, ports: list[int] | None = None) -> list[FoundEngine]:
    """One look at loopback for engines this node has not adopted (its own front door left out)."""
    found = await discover(ports, skip_urls=[f"http://{node.frontdoor_address}"] if node.frontdoor_address else [])
    return not_adopted(found, node.engines)


async def first_start_lines(node: Node) -> str:
    engines = node.engines.describe()
    if engines:
        return "\n".join(
            f"engine {e['name']} ({e['api']}) at {e['url']}: "
            f"{', '.join(e.get('models') or []) or e.get('error') or 'no models yet'}" for e in engines)
    found = await offers(node)
    if not found:
        return ("No engine adopted, and none answered on this machine's usual ports. Add one with "
                "`pairwise engines add NAME --url URL --api ollama|openai`.")
    return ("No engine adopted yet. Found on this machine:\n" + describe(found)
            + "\nAdopt them with `pairwise engines discover --add`.")
