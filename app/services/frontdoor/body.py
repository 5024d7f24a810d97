"""Reading a request body to its end, within a size limit, and parsing it as bounded JSON.

``StreamReader.read(n)`` returns what is buffered so far, not ``n`` bytes: a body that
arrives in pieces (a large write split by TCP, TLS records, chunked encoding) must be
read until the stream ends, or the JSON is cut mid-string."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable

from aiohttp import web

from app.services.errors import PairwiseError
from app.services.json_types import JsonObject

# Deeper than any real request (a JSON schema in `format` nests a few dozen levels at most);
# deeper input is refused before anything walks it recursively.
MAX_JSON_DEPTH = 128


class BodyError(PairwiseError):
    """Why a request body was refused, with the HTTP status to answer."""

    title = "Request body refused"

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_body(request: web.Request, max_bytes: int) -> bytes:
    """Every byte of the body, chunked or not; BodyError(413) as soon as it passes ``max_bytes``."""
    if request.content_length is not None and request.content_length > max_bytes:
        raise BodyError(413, f"request body of {request.content_length} bytes exceeds the {max_bytes}-byte limit")
    parts: list[bytes] = []
    total = 0
    try:
        while True:
            part = await request.content.read(65536)
            if not part:
                break
            total += len(part)
            if total > max_bytes:
                raise BodyError(413, f"request body exceeds the {max_bytes}-byte limit")
            parts.append(part)
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        raise BodyError(400, "the request body could not be read to its end") from exc
    return b"".join(parts)


def json_depth_exceeds(value: object, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit``; iterative, so no input can exhaust the stack."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def parse_json_object(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> JsonObject:
    """The body as a JSON object; BodyError(400) naming what is wrong otherwise."""
    try:
        body = json.loads(raw) if raw else None
    except RecursionError as exc:
        raise BodyError(400, f"the request body's JSON nests deeper than {max_depth} levels") from exc
    except ValueError as exc:
        raise BodyError(400, f"malformed JSON in request body: {exc}") from exc
    if not isinstance(body, dict):
        raise BodyError(400, "the request body must be a JSON object")
    # Each level opens with a bracket or a brace: a body with no more of them than the limit cannot
    # nest deeper (two counts at C speed, where the walk visits every value in Python).
    if raw.count(b"[") + raw.count(b"{") > max_depth and json_depth_exceeds(body, max_depth):
        raise BodyError(400, f"the request body's JSON nests deeper than {max_depth} levels")
    return body
