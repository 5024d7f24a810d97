"""Injected faults: the next `count` requests to a target fail in a chosen way.

Targets: "management" (/v2), "hub" (whoami, auth-check, jobs), "catalog", "router",
"endpoint:<ns>/<name>" (that endpoint's URL) and "job:<ns>/<id>" (a job's exposed ports). An
optional "path" narrows a fault to request paths containing that text, an optional "method" to one
HTTP method (a hanging GET while the POSTs still work).
Kinds: "429" (Retry-After and RateLimit headers), "500", "plain_400" (a non-JSON 400 body),
"slow" (delay_s, then the normal answer), "late" (the request takes effect at once and its answer
leaves delay_s later, as over a slow way back), "timeout" (no answer until the client gives up),
"cut_stream" (the body stops after cut_after_chunks stream events, or half-way for a JSON body,
and the connection drops).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from aiohttp import web

from app.simulator.httputil import hf_error, plain_400, rate_limited

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
KINDS = ("429", "500", "slow", "late", "cut_stream", "plain_400", "timeout")
# Stream events to relay before dropping the connection; set by a cut_stream fault.
CUT_KEY: web.RequestKey[int] = web.RequestKey("sim_cut_after", int)
# Set when a streaming relay already applied the cut, so the middleware does not cut again.
CUT_DONE_KEY: web.RequestKey[bool] = web.RequestKey("sim_cut_done", bool)


@dataclass
class Fault:
    target: str
    kind: str
    count: int = 1
    retry_after: int = 1
    delay_s: float = 1.0
    cut_after_chunks: int = 2
    path: str | None = None
    method: str | None = None


class FaultBoard:
    def __init__(self) -> None:
        self._faults: list[Fault] = []

    def add_from_json(self, body: dict[str, Any]) -> Fault:
        target, kind = body.get("target"), str(body.get("kind"))
        if not isinstance(target, str) or not target:
            raise ValueError("target is required")
        if not (target in ("management", "hub", "catalog", "router")
                or target.startswith("endpoint:") or target.startswith("job:")):
            raise ValueError(f"unknown target {target!r}")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        fault = Fault(target=target, kind=kind, count=int(body.get("count", 1)),
                      retry_after=int(body.get("retry_after", 1)), delay_s=float(body.get("delay_s", 1.0)),
                      cut_after_chunks=int(body.get("cut_after_chunks", 2)), path=body.get("path"),
                      method=str(body["method"]).upper() if body.get("method") else None)
        self._faults.append(fault)
        return fault

    def take(self, target: str, path: str, method: str = "GET") -> Fault | None:
        """Consume one use of the first fault matching this request, if any."""
        for fault in self._faults:
            if fault.method is not None and fault.method != method:
                continue
            if fault.target == target and fault.count > 0 and (fault.path is None or fault.path in path):
                fault.count -= 1
                if fault.count == 0:
                    self._faults.remove(fault)
                return fault
        return None

    def clear(self) -> None:
        self._faults.clear()

    def as_json(self) -> list[dict[str, Any]]:
        return [asdict(f) for f in self._faults]


async def apply(request: web.Request, fault: Fault, closing: asyncio.Event) -> web.StreamResponse | None:
    """The response that replaces the real one, or None to let the request through (slow, cut_stream)."""
    if fault.kind == "429":
        return rate_limited(fault.retry_after)
    if fault.kind == "500":
        return hf_error(500, "Internal Server Error")
    if fault.kind == "plain_400":
        return plain_400("Failed to parse the request body as JSON: model.task: expected value at line 1 column 257")
    if fault.kind == "slow":
        await asyncio.sleep(fault.delay_s)
        return None
    if fault.kind == "late":
        return None  # the middleware holds the answer once the request has taken effect
    if fault.kind == "cut_stream":
        request[CUT_KEY] = fault.cut_after_chunks
        return None
    # "timeout": hold the request; aiohttp cancels us when the client disconnects.
    await closing.wait()
    abort(request)
    return web.Response()


def abort(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.abort()


async def cut_body(request: web.Request, response: web.Response) -> web.StreamResponse:
    """Send half of a finished JSON body, then drop the connection."""
    body = response.body if isinstance(response.body, bytes) else b""
    out = web.StreamResponse(status=response.status, headers=response.headers)
    out.content_length = len(body)
    await out.prepare(request)
    try:
        await out.write(body[: len(body) // 2])
    except ConnectionError:
        pass
    abort(request)
    return out
