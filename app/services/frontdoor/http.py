"""Writing an InferenceResult to an aiohttp response, shared by the front door
and the cluster relay."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from app.services.frontdoor.body import BodyError, parse_json_object, read_body
from app.services.inference import InferenceResult
from app.services.translate.shapes import Api, error_body


async def read_json_body(request: web.Request, api: Api, max_bytes: int) -> dict[str, Any] | web.Response:
    """The request's JSON object, read to its end, or a shaped error response that says what is wrong."""
    try:
        return parse_json_object(await read_body(request, max_bytes))
    except BodyError as exc:
        return shaped_error(api, exc.status, exc.message)


def shaped_error(api: Api, status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(error_body(api, message, status=status), status=status, headers=headers)


async def write_result(request: web.Request, result: InferenceResult) -> web.StreamResponse:
    if result.stream is None:
        return web.Response(status=result.status, body=result.body, content_type=result.content_type,
                            headers=result.headers)
    session = result.stream
    response = web.StreamResponse(status=result.status, headers=result.headers)
    response.content_type = result.content_type
    if result.content_type == "text/event-stream":
        response.headers["Cache-Control"] = "no-cache"
    cancelled = True
    try:
        await response.prepare(request)
        async for chunk in session.chunks():
            await response.write(chunk)
        # Everything was written: a caller that hangs up now (as soon as it read the last
        # chunk) did not cancel anything.
        cancelled = False
        await response.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        # Closing here, whatever happened, closes the upstream request too.
        await asyncio.shield(session.close(cancelled=cancelled))
    return response
