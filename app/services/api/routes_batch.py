"""The control API's batch routes (under /_pairwise/v1), thin adapters over ``BatchApi``:

    GET    /batches?limit=N                 {"batches": [batch...]}
    POST   /batches/plan   {content, deadline?, budget_usd?}            the plan
    POST   /batches        {content, deadline?, budget_usd?, rent?, completion_window?, endpoint?}
                                            {"batch", "plan", "rented_window"}
    GET    /batches/{id}                    the batch (OpenAI's object, with "pairwise" progress)
    POST   /batches/{id}/cancel             the batch, cancelling
    GET    /batches/{id}/results?errors=1   {"lines": [...]}: the output (or error) file's lines
    DELETE /batches/{id}                    the batch and its files, gone from the home
"""

from __future__ import annotations

import json

from aiohttp import web

from app.services.api.batch import BatchApi
from app.services.api.changes import BatchOrder, parsed
from app.services.batch.service import BatchInvalid
from app.services.frontdoor.control import Handler, json_body, query_flag, query_int

Route = tuple[str, str, Handler]


def batch_routes(api: BatchApi) -> list[Route]:
    async def listing(request: web.Request) -> web.Response:
        return web.json_response({"batches": api.list(query_int(request, "limit", 50, low=1, high=1000))})

    async def plan(request: web.Request) -> web.Response:
        return web.json_response(await api.plan(parsed(BatchOrder, await json_body(request), error=BatchInvalid)))

    async def run(request: web.Request) -> web.Response:
        return web.json_response(await api.run(parsed(BatchOrder, await json_body(request), error=BatchInvalid)), status=201)

    async def show(request: web.Request) -> web.Response:
        return web.json_response(api.show(request.match_info["batch_id"]))

    async def cancel(request: web.Request) -> web.Response:
        return web.json_response(api.cancel(request.match_info["batch_id"]))

    async def results(request: web.Request) -> web.Response:
        body = api.results(request.match_info["batch_id"], errors=query_flag(request, "errors"))
        return web.json_response({"lines": [json.loads(line) for line in body.splitlines() if line.strip()]})

    async def delete(request: web.Request) -> web.Response:
        return web.json_response(api.delete(request.match_info["batch_id"]))

    return [
        ("GET", "/batches", listing), ("POST", "/batches/plan", plan), ("POST", "/batches", run),
        ("GET", "/batches/{batch_id}", show), ("POST", "/batches/{batch_id}/cancel", cancel),
        ("GET", "/batches/{batch_id}/results", results), ("DELETE", "/batches/{batch_id}", delete),
    ]
