"""Per-peer limits as people write them: ``laptop-b=2``, ``*=5``, ``old=off`` (the CLI's repeated
``--peer-usd-per-day`` and the tray's one-line field ``laptop-b=2, *=5``), and back.

``parse_peer_values(items, kind, what) -> {peer: value or None}`` (None removes that peer's entry);
``replacing(current, wanted) -> changes`` turns a whole new table into the changes that leave exactly
it (entries no longer wanted become None); ``peer_text(table) -> "laptop-b=2, *=5"``.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.services.errors import ConfigError

REMOVE_WORDS = ("off", "none", "")


def split_items(text: str) -> list[str]:
    return [item for item in text.replace(",", " ").split() if item]


def parse_peer_values(items: list[str], kind: type[int] | type[float], what: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for item in items:
        peer, sep, value = item.partition("=")
        if not sep or not peer.strip():
            raise ConfigError(f"{what} takes PEER=VALUE (PEER a node name or id, or '*'), not {item!r}")
        if value.strip().lower() in REMOVE_WORDS:
            out[peer.strip()] = None
            continue
        try:
            out[peer.strip()] = kind(value)
        except ValueError as exc:
            raise ConfigError(f"{what} {item!r}: {value!r} is not a {'whole ' if kind is int else ''}number") from exc
    return out


def replacing(current: Mapping[str, object], wanted: Mapping[str, float | None]) -> dict[str, float | None]:
    return {**{peer: None for peer in current if peer not in wanted}, **wanted}


def peer_text(table: Mapping[str, float]) -> str:
    return ", ".join(f"{peer}={value:g}" for peer, value in table.items())
