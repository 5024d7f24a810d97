"""Keys at the doors: who a request is from, and whether it may come in.

- The loopback front door: a key is optional. A bearer token that starts with ``pw-`` is a key
  and must be valid (401 otherwise); other bearer tokens are ignored, because OpenAI clients send
  whatever API key they were given (often a placeholder) and local apps must keep working.
- The LAN door: a valid key is required on every route (401 for none, a wrong or a revoked one),
  and an address that sends ``FAILED_LIMIT`` wrong keys within ``FAILED_WINDOW_S`` is refused with
  429 and ``Retry-After`` until the window has passed, valid key or not, so guessing gains nothing.

The middleware leaves the accepted ``KeyRecord`` (or None) in ``request[KEY]``; ``caller_for``
turns it into the ``Caller`` of the inference service; ``key_may_see_model`` is the one check of a
scoped key, and ``refuse_model`` / ``model_refusal`` refuse a model the key may not use, by name.

Public API: ``KEY``, ``optional_key(keys)``, ``required_key(keys, throttle)``, ``FailedAttempts``,
``bearer_of(request)``, ``caller_for(node, request)``, ``key_may_see_model(request, model)``,
``refuse_model(request, api, model)``, ``model_refusal(request, api, body)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

from aiohttp import typedefs, web

from app.services.backends.base import Caller
from app.services.frontdoor.http import shaped_error
from app.services.jobs.requester import local_app, with_key
from app.services.keys.store import KEY_PREFIX, KeyRecord, KeyRefused, KeyStore
from app.services.translate.shapes import Api

if TYPE_CHECKING:
    from app.settings import NodeSettings


class CallerNode(Protocol):
    """What ``caller_for`` reads of a node (a Protocol, so this room never names Node)."""

    name: str
    node_id: str
    settings: NodeSettings

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Middleware = typedefs.Middleware
KEY = web.RequestKey("pairwise_key", object)
CONTROL_PREFIX = "/_pairwise/"
FAILED_LIMIT = 10
FAILED_WINDOW_S = 60.0
MAX_ADDRESSES = 10_000


def api_of(path: str) -> Api:
    return "openai" if path.startswith("/v1/") else "ollama"


def bearer_of(request: web.Request) -> str | None:
    """The key a caller presents: a bearer token, or (Anthropic's clients) the x-api-key header."""
    value = request.headers.get("Authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return request.headers.get("x-api-key", "").strip() or None


def _unauthorized(request: web.Request, exc: KeyRefused) -> web.Response:
    return shaped_error(api_of(request.path), 401, exc.message, headers={"WWW-Authenticate": 'Bearer realm="pairwise"'})


class KeyStreams:
    """The requests each key has in progress, so revoking the key ends them (a stream that started
    before the revocation does not run on to its end)."""

    def __init__(self, keys: KeyStore) -> None:
        self._by_key: dict[str, set[asyncio.Task[object]]] = {}
        keys.revoked_listeners.append(self.end)

    @contextlib.contextmanager
    def track(self, name: str) -> Iterator[None]:
        task = asyncio.current_task()
        if task is None:
            yield
            return
        running = self._by_key.setdefault(name, set())
        running.add(task)
        try:
            yield
        finally:
            running.discard(task)
            if not running:
                self._by_key.pop(name, None)

    def end(self, record: KeyRecord) -> None:
        running = self._by_key.pop(record.name, set())
        if running:
            log.info("key %s revoked: ending its %d request(s) in progress", record.name, len(running))
        for task in running:
            task.cancel()


_STREAMS: weakref.WeakKeyDictionary[KeyStore, KeyStreams] = weakref.WeakKeyDictionary()


def streams_of(keys: KeyStore) -> KeyStreams:
    """The one ``KeyStreams`` of a key store (both doors share it)."""
    streams = _STREAMS.get(keys)
    if streams is None:
        streams = _STREAMS[keys] = KeyStreams(keys)
    return streams


async def _as(request: web.Request, handler: Handler, record: KeyRecord | None,
              streams: KeyStreams) -> web.StreamResponse:
    request[KEY] = record
    if record is None:
        return await handler(request)
    with streams.track(record.name):
        return await handler(request)


def optional_key(keys: KeyStore) -> Middleware:
    streams = streams_of(keys)

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        token = bearer_of(request)
        record: KeyRecord | None = None
        if not request.path.startswith(CONTROL_PREFIX) and token and token.startswith(KEY_PREFIX):
            try:
                record = keys.verify(token)
            except KeyRefused as exc:
                return _unauthorized(request, exc)
        return await _as(request, handler, record, streams)

    return middleware


class FailedAttempts:
    """Wrong keys per remote address in a sliding window; bounded in memory."""

    def __init__(self, limit: int = FAILED_LIMIT, window_s: float = FAILED_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, address: str) -> deque[float] | None:
        failures = self._failures.get(address)
        if failures is None:
            return None
        cutoff = self.clock() - self.window_s
        while failures and failures[0] <= cutoff:
            failures.popleft()
        if not failures:
            del self._failures[address]
            return None
        return failures

    def retry_after(self, address: str) -> int | None:
        """Seconds until ``address`` may try again, or None if it is not throttled."""
        failures = self._recent(address)
        if failures is None or len(failures) < self.limit:
            return None
        return max(1, math.ceil(failures[-self.limit] + self.window_s - self.clock()))

    def failed(self, address: str) -> None:
        if len(self._failures) >= MAX_ADDRESSES and address not in self._failures:
            for stale in list(self._failures)[: MAX_ADDRESSES // 10]:  # oldest first (insertion order)
                del self._failures[stale]
        self._failures.setdefault(address, deque(maxlen=self.limit * 2)).append(self.clock())


def required_key(keys: KeyStore, throttle: FailedAttempts) -> Middleware:
    streams = streams_of(keys)

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        address = request.remote or "unknown"
        wait = throttle.retry_after(address)
        if wait is not None:
            return shaped_error(api_of(request.path), 429,
                                f"refused: too many wrong keys from {address}; retry after {wait} s",
                                headers={"Retry-After": str(wait)})
        try:
            record = keys.verify(bearer_of(request))
        except KeyRefused as exc:
            throttle.failed(address)
            return _unauthorized(request, exc)
        return await _as(request, handler, record, streams)

    return middleware


def caller_for(node: CallerNode, request: web.Request) -> Caller:
    """The inference caller of a front-door or LAN-door request."""
    record: object = request.get(KEY)
    user_agent = request.headers.get("User-Agent")
    allow = node.settings.off_lan == "allow"
    rule = "setting off_lan: deny"
    if isinstance(record, KeyRecord):
        requester = with_key(node.node_id, node.name, record.name, user_agent)
        if allow and record.off_lan == "deny":
            allow, rule = False, f"key {record.name!r} has off-LAN: deny"
    else:
        requester = local_app(node.node_id, node.name, user_agent)
    return Caller(requester=requester, allow_off_lan=allow, off_lan_rule=rule)


def key_may_see_model(request: web.Request, model: str) -> bool:
    """The one check of a scoped key: may the request's key (if any) see or use ``model``? Every route
    that names a model asks it (inference, embeddings, /api/show, /v1/models/{id}, the listings)."""
    record: object = request.get(KEY)
    return not isinstance(record, KeyRecord) or record.allows_model(model.strip())


def refuse_model(request: web.Request, api: Api, model: str) -> web.Response | None:
    """403 in the caller's API naming the key and its patterns when its key may not see ``model``."""
    record: object = request.get(KEY)
    if not isinstance(record, KeyRecord) or key_may_see_model(request, model):
        return None
    patterns = ", ".join(record.models)
    return shaped_error(api, 403, f"refused: key {record.name!r} may use only models matching {patterns}; "
                                  f"{model.strip()[:200]!r} is not one of them")


def model_refusal(request: web.Request, api: Api, body: Mapping[str, object]) -> web.Response | None:
    """``refuse_model`` for a request body's ``model`` (a body without a text model is validated later)."""
    model = body.get("model")
    return refuse_model(request, api, model) if isinstance(model, str) else None
