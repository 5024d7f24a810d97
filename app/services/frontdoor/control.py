"""The control API under /_pairwise/v1/: how the CLI (and scripts) talk to a
running node. Guarded by the node's local control token (0600 file in its home),
on top of the front door's loopback-only rule.

The routes themselves are the node's ``extra_control_routes``: the service API's
(``app.services.api.routes``, added by bootstrap) and any a feature adds; this module
only guards them and turns a ``PairwiseError`` into its JSON error body."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web

from app.home import NotSaved, why_not_written
from app.services.errors import ConfigError, PairwiseError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from app.home import Home

PREFIX = "/_pairwise/v1"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ControlRoute = tuple[str, str, Handler]  # (method, path under PREFIX, handler)


class ControlNode(Protocol):
    """What the control API reads of a node: its token's home and the routes it serves."""

    home: Home
    extra_control_routes: list[ControlRoute]


async def json_body(request: web.Request) -> dict[str, Any]:
    """A control call's JSON object body ({} when there is none); a clear ConfigError otherwise."""
    if not request.can_read_body:
        return {}
    try:
        data = await request.json()
    except ValueError as exc:
        raise ConfigError(f"malformed JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError("the body must be a JSON object")
    return data


def query_int(request: web.Request, name: str, default: int, *, low: int, high: int) -> int:
    """A whole-number query parameter; anything else is refused (400) naming it."""
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"query parameter {name!r} must be a whole number from {low} to {high}, "
                          f"not {raw[:40]!r}", title="Bad query parameter") from None
    if not low <= value <= high:
        raise ConfigError(f"query parameter {name!r} must be from {low} to {high}, not {value}",
                          title="Bad query parameter")
    return value


def query_flag(request: web.Request, name: str) -> bool:
    raw = request.query.get(name)
    if raw is None or raw.lower() in ("0", "false", "no", ""):
        return False
    if raw.lower() in ("1", "true", "yes"):
        return True
    raise ConfigError(f"query parameter {name!r} must be true or false, not {raw[:40]!r}",
                      title="Bad query parameter")


def error_response(exc: PairwiseError) -> web.Response:
    return web.json_response({"error": exc.message, "title": exc.title, "kind": type(exc).__name__},
                             status=exc.status)


def add_control_routes(app: web.Application, node: ControlNode) -> None:
    token = node.home.control_token()

    def guarded(handler: Handler) -> Handler:
        async def wrapper(request: web.Request) -> web.StreamResponse:
            given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if not given or not hmac.compare_digest(given, token):
                return web.json_response(
                    {"error": "refused: the control API needs this node's control token (file control_token in its home)"},
                    status=401)
            try:
                return await handler(request)
            except PairwiseError as exc:
                return error_response(exc)
            except OSError as exc:
                # A file the route had to write or read (the handler did not name it): still said by name.
                return error_response(NotSaved(f"{request.method} {request.path} failed: "
                                               f"{exc.filename or 'a file'} ({why_not_written(exc)})"))
            except web.HTTPException:
                raise
            except Exception as exc:  # a request's top: a bug is a named error, never aiohttp's bare 500
                log.exception("control route %s %s failed", request.method, request.path)
                return web.json_response({"error": f"{request.method} {request.path} failed: {type(exc).__name__} "
                                                   "(a bug; details in the node's log)",
                                          "title": "Internal error", "kind": "InternalError"}, status=500)

        return wrapper

    for method, path, handler in node.extra_control_routes:
        app.router.add_route(method, PREFIX + path, guarded(handler))
