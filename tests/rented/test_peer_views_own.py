"""The registry reads peers' rented nodes (rented/peer_view.py) on every request: the provider of this
node's own rented rows is never asked there (its rows were made only to be dropped, a cost on every
request's way to its first byte), while a provider that joins the node's list later (the cluster's
peer rows) is read, and a peer's row gives a view."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from app.services.rented.peer_view import PeerRentedViews

ME = "node-me"


def test_the_own_rows_are_not_made_and_a_later_provider_is_read() -> None:
    asked: list[str] = []

    def own_rows() -> list[dict[str, Any]]:
        asked.append("own")
        return [{"kind": "rented", "id": "mine", "sponsor_id": ME, "node": "mine"}]

    providers: list[Callable[[], Iterable[Mapping[str, Any]]]] = [own_rows]
    views = PeerRentedViews(ME, providers, own=own_rows)
    assert views() == []
    assert asked == []

    def peer_rows() -> list[dict[str, Any]]:
        asked.append("peers")
        return [{"kind": "rented", "id": "theirs", "sponsor_id": "node-peer", "node": "theirs", "shared": True}]

    providers.append(peer_rows)  # the cluster attaches after the rented feature
    found = views()
    assert asked == ["peers"]
    assert [view.key for view in found] == ["peer-rented:theirs"]


def test_without_own_every_provider_is_read_and_own_rows_are_still_dropped() -> None:
    asked: list[str] = []

    def rows() -> list[dict[str, Any]]:
        asked.append("rows")
        return [{"kind": "rented", "id": "mine", "sponsor_id": ME, "node": "mine"}]

    assert PeerRentedViews(ME, [rows])() == []
    assert asked == ["rows"]
