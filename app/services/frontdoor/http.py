"""Writing an InferenceResult to an aiohttp response, shared by the front door
and the cluster relay."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from app.services.inference import InferenceResult
from app.services.translate.shapes import Api, error_body


async def read_json_body(request: web.Request, api: Api, max_bytes: int) -> dict[str, Any] | web.Response:
    """The request's JSON object, or a shaped error response that says what is wrong."""
    if request.content_length is not None and request.content_length > max_bytes:
        return shaped_error(api, 413, f"request body of {request.content_length} bytes exceeds the {max_bytes}-byte limit")
    try:
        raw = await request.content.read(max_bytes + 1)
    except (ConnectionError, asyncio.IncompleteReadError):
        return shaped_error(api, 400, "the request body could not be read")
    if len(raw) > max_bytes:
        return shaped_error(api, 413, f"request body exceeds the {max_bytes}-byte limit")
    try:
        body = json.loads(raw) if raw else None
    except ValueError as exc:
        return shaped_error(api, 400, f"malformed JSON in request body: {exc}")
    if not isinstance(body, dict):
        return shaped_error(api, 400, "the request body must be a JSON object")
    return body


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
