"""Open a streamed HTTP request and read its first chunk under a deadline.

Statuses that mean "try someone else" (404, 408, 429, 5xx) become an
UpstreamError before anything reaches the caller; other errors are handed back
so the caller sees the upstream's own complaint (in its own API shape).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx

from app.services.backends.base import Opened
from app.services.errors import UpstreamError, UpstreamTimeout

FAILOVER_STATUSES = frozenset({404, 408, 429}) | frozenset(range(500, 600))


def error_text(body: bytes) -> str:
    """The upstream's message from a JSON or plain-text error body, trimmed."""
    import json

    text = body.decode("utf-8", "replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:300] or "(empty body)"
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    return text[:300]


async def open_stream(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json_body: dict[str, Any] | None,
    headers: dict[str, str],
    first_byte_timeout_s: float,
    label: str,
    retry_statuses: frozenset[int] = FAILOVER_STATUSES,
    extensions: dict[str, Any] | None = None,
) -> Opened:
    request = client.build_request(method, url, json=json_body, headers=headers, extensions=extensions or {})
    response: httpx.Response | None = None
    try:
        async with asyncio.timeout(first_byte_timeout_s):
            response = await client.send(request, stream=True)
            if response.status_code in retry_statuses:
                body = await response.aread()
                raise UpstreamError(
                    f"{label} answered {response.status_code}: {error_text(body)}",
                    status=response.status_code,
                )
            iterator = response.aiter_raw()
            first = b""
            async for chunk in iterator:
                if chunk:
                    first = chunk
                    break
    except TimeoutError as exc:
        if response is not None:
            await response.aclose()
        raise UpstreamTimeout(f"{label} sent nothing within {first_byte_timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        if response is not None:
            await response.aclose()
        raise UpstreamError(f"{label} could not be reached: {type(exc).__name__}: {exc}") from exc
    except BaseException:
        if response is not None:
            await response.aclose()
        raise
    return Opened(
        status=response.status_code,
        content_type=response.headers.get("content-type", "application/json"),
        first_chunk=first,
        rest=_rest(iterator),
        closer=response.aclose,
        headers=dict(response.headers),
    )


async def _rest(iterator: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for chunk in iterator:
        if chunk:
            yield chunk
