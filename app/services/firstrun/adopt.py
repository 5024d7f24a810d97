"""Adopting what discovery found, and the note that says Ollama was asked to move.

When Ollama held the front door, Pairwise told the user to move it to the next port and promised
to adopt it there; the promise is kept in ``firstrun.json`` in the home, so the start that finds
the front door free adds Ollama at its new address (the engine's own refresh lists its models as
soon as it answers there). The note is also where the welcome window remembers it was seen.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from app.home import Home, write_private
from app.services.firstrun.discover import FoundEngine

if TYPE_CHECKING:
    from app.services.api.snapshots import EngineRow


class Engines(Protocol):
    """What adopting needs of the node's EngineManager."""

    async def add(self, data: dict[str, Any], token: str | None) -> EngineRow: ...

    def describe(self) -> list[EngineRow]: ...


def read_notes(home: Home) -> dict[str, Any]:
    try:
        data = json.loads(home.firstrun_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_notes(home: Home, notes: dict[str, Any]) -> None:
    write_private(home.firstrun_file, json.dumps(notes, indent=2).encode())


def remember_ollama_move(home: Home, front_door: str, moved_to: str) -> None:
    notes = read_notes(home)
    notes["ollama_move"] = {"from": front_door, "to": moved_to, "asked_at": time.time()}
    write_notes(home, notes)


def pending_ollama_move(home: Home) -> str | None:
    """The address Ollama was asked to move to, while that adoption is still owed."""
    move = read_notes(home).get("ollama_move")
    return str(move["to"]) if isinstance(move, dict) and move.get("to") else None


def clear_ollama_move(home: Home) -> None:
    notes = read_notes(home)
    if notes.pop("ollama_move", None) is not None:
        write_notes(home, notes)


def mark_welcomed(home: Home) -> None:
    notes = read_notes(home)
    notes["welcomed_at"] = time.time()
    write_notes(home, notes)


def welcomed(home: Home) -> bool:
    return "welcomed_at" in read_notes(home)


def adopted_urls(engines: Engines) -> set[str]:
    return {e["url"].rstrip("/") for e in engines.describe()}


def free_name(wanted: str, taken: set[str], url: str) -> str:
    if wanted not in taken:
        return wanted
    port = url.rsplit(":", 1)[-1].strip("/")
    candidate = f"{wanted}-{port}"
    counter = 2
    while candidate in taken:
        candidate = f"{wanted}-{port}-{counter}"
        counter += 1
    return candidate


def not_adopted(found: Sequence[FoundEngine], engines: Engines) -> list[FoundEngine]:
    have = adopted_urls(engines)
    return [f for f in found if f.url.rstrip("/") not in have]


async def adopt(engines: Engines, found: Sequence[FoundEngine]) -> list[EngineRow]:
    """Add each found engine not adopted yet; returns what ``engines add`` described for each."""
    added = []
    taken = {e["name"] for e in engines.describe()}
    for engine in not_adopted(found, engines):
        name = free_name(engine.name, taken, engine.url)
        added.append(await engines.add(engine.declaration(name), None))
        taken.add(name)
    return added


async def keep_ollama_promise(home: Home, engines: Engines) -> EngineRow | None:
    """Once the front door is ours: adopt Ollama where it was asked to move (if not adopted yet)."""
    moved = pending_ollama_move(home)
    if moved is None:
        return None
    url = f"http://{moved}"
    described: EngineRow | None = None
    if url not in adopted_urls(engines):
        taken = {e["name"] for e in engines.describe()}
        described = await engines.add({"name": free_name("ollama", taken, url), "url": url, "api": "ollama"}, None)
    clear_ollama_move(home)
    return described
