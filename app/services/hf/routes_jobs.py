"""Control routes for batch windows (HTTP adapters over ``RentedApi``), under /_pairwise/v1/hf/jobs:

POST /hf/jobs/plan            the window's plan and cost against the caps (refused if they cannot pay)
POST /hf/jobs                 run the job and attach it (201); both take a ``WindowOrder`` (orders.py):
                              {"name", "model", "gpu", "window", "budget": {"usd_per_day"}, "lifecycle": ...}
POST /hf/jobs/{name}/stop     cancel the window now (an older spelling of POST /rented/{name}/stop)
POST /hf/jobs/{name}/extend   always refused, with the reason (HF cannot lengthen a job)
GET  /hf/jobs/{name}/logs     the job's log lines as NDJSON {"timestamp","line"}; ?follow=1 streams until
                              the job ends, ?tail=N starts from the last N lines
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp import web

from app.services.api.rented import RentedApi
from app.services.errors import ConfigError, PairwiseError
from app.services.frontdoor.control import json_body
from app.services.hf.providers import JOB

Route = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]


def windows_routes(rented: RentedApi) -> list[Route]:
    async def plan(request: web.Request) -> web.Response:
        return web.json_response(await rented.window_plan(await json_body(request), JOB))

    async def create(request: web.Request) -> web.Response:
        return web.json_response(await rented.window_create(await json_body(request), JOB), status=201)

    async def stop(request: web.Request) -> web.Response:
        return web.json_response(await rented.window_stop(request.match_info["name"]))

    async def extend(request: web.Request) -> web.Response:
        rented.window_extend(request.match_info["name"], JOB)
        raise AssertionError("extend always refuses")  # pragma: no cover

    async def logs(request: web.Request) -> web.StreamResponse:
        follow = request.query.get("follow") in ("1", "true", "yes")
        raw_tail = request.query.get("tail")
        if raw_tail is not None and not raw_tail.isdigit():
            raise ConfigError(f"tail={raw_tail!r} is not a number of lines")
        lines = rented.window_logs(request.match_info["name"], follow=follow, tail=int(raw_tail) if raw_tail else None,
                                   provider=JOB)
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        first = True
        try:
            async for timestamp, line in lines:
                if first:
                    await response.prepare(request)
                    first = False
                await response.write(json.dumps({"timestamp": timestamp, "line": line}).encode() + b"\n")
        except PairwiseError as exc:
            if first:
                raise
            await response.write(json.dumps({"error": exc.message}).encode() + b"\n")
        if first:
            await response.prepare(request)
        await response.write_eof()
        return response

    return [
        ("POST", "/hf/jobs/plan", plan), ("POST", "/hf/jobs", create),
        ("POST", "/hf/jobs/{name}/stop", stop), ("POST", "/hf/jobs/{name}/extend", extend),
        ("GET", "/hf/jobs/{name}/logs", logs),
    ]
