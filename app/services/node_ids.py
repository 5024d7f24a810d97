"""Identities every room agrees on without importing each other: a rented node's id is derived from its
sponsor's id and its name, so every peer computes the same one (replication checks a peer's claims
against it; the sponsor's meter and limits key spend by it)."""

from __future__ import annotations

import uuid


def rented_node_id(sponsor_id: str, name: str) -> str:
    """A stable id for a rented node: the same on every peer, derived from its sponsor and name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pairwise:{sponsor_id}:rented:{name}"))
