"""``GET /metrics``: a node's metrics in Prometheus' text format (issue 31).

At the loopback front door only (never the LAN door), and behind the node's control token like the
control API, since the labels name engines, peers and rented nodes and the gauges show spend:
``Authorization: Bearer <the file control_token in the node's home>`` (Prometheus:
``authorization: {credentials_file: <home>/control_token}``). ``PAIRWISE_METRICS=off`` keeps a node
from counting at all (the bench's "metrics off" side); the route then says so.

``attach_metrics`` subscribes the book (``book.py``) to the job events; the text is rendered by
``text.py``, imported at the first scrape."""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Protocol

from aiohttp import web

from app.environment import environment
from app.services.metrics.book import MetricsBook

if TYPE_CHECKING:
    from app.home import Home
    from app.services.events import EventBus
    from app.services.frontdoor.control import ControlRoute
    from app.services.inference import InferenceService
    from app.services.rented.manager import RentedManager
    from app.services.routing.registry import UpstreamRegistry

PATH = "/metrics"
REFUSED = "refused: /metrics needs this node's control token (file control_token in its home) as a Bearer token"


class MetricsNode(Protocol):
    home: Home
    bus: EventBus
    registry: UpstreamRegistry
    inference: InferenceService
    rented: RentedManager | None
    extra_door_routes: list[ControlRoute]


def attach_metrics(node: MetricsNode) -> MetricsBook | None:
    """Count this node's jobs and serve ``/metrics``; None when ``PAIRWISE_METRICS=off``."""
    book: MetricsBook | None = None
    if not environment().metrics_off:
        book = MetricsBook()
        node.bus.on(book.on_event)
        node.inference.attempt_watchers.append(book.on_attempt_failed)
    token = node.home.control_token()

    async def scrape(request: web.Request) -> web.StreamResponse:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not given or not hmac.compare_digest(given, token):
            return web.json_response({"error": REFUSED}, status=401, headers={"WWW-Authenticate": "Bearer"})
        if book is None:
            return web.json_response({"error": "metrics are off on this node (PAIRWISE_METRICS=off)"}, status=404)
        from app.services.metrics.text import CONTENT_TYPE, render

        return web.Response(body=render(book, node).encode(), headers={"Content-Type": CONTENT_TYPE})

    node.extra_door_routes.append(("GET", PATH, scrape))
    return book
