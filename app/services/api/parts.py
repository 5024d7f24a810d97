"""A provider's part of the service API: what one provider adds to ``NodeApi`` (its account, its
look-ups) and to the control routes (its own paths), kept in the provider's folder and registered
here by a key of its own, so the generic API and routes name no provider.

A provider's folder registers its part once, before a ``NodeApi`` is made (the composition root
calls its ``register_*``)::

    register_part("my-cloud", MyCloudApi, my_cloud_routes)

``MyCloudApi(node)`` is made with each ``NodeApi``, which finds it by type (``api.part(MyCloudApi)``:
the tray's pages of that provider); ``my_cloud_routes(part, rented)`` gives its control routes, which
``control_routes`` serves with the generic ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from app.services.frontdoor.control import ControlRoute

if TYPE_CHECKING:
    from app.services.api.rented import RentedApi
    from app.services.node import Node

T = TypeVar("T")


@dataclass(frozen=True)
class Part:
    """One provider's API object for one node, and its control routes."""

    key: str
    api: object
    routes: list[ControlRoute]


PartMaker = Callable[["Node", "RentedApi"], Part]
_MAKERS: dict[str, PartMaker] = {}


def register_part(key: str, make: Callable[[Node], T], routes: Callable[[T, RentedApi], list[ControlRoute]]) -> None:
    """Register (or replace) the part called ``key``: ``make(node)`` builds its API object, ``routes``
    its control routes over it and the rented-node API."""

    def part(node: Node, rented: RentedApi) -> Part:
        api = make(node)
        return Part(key, api, routes(api, rented))

    _MAKERS[key] = part


def parts_for(node: Node, rented: RentedApi) -> list[Part]:
    """Every registered part, made for this node (in the order they were registered)."""
    return [make(node, rented) for make in _MAKERS.values()]
