"""Response helpers that reproduce Hugging Face's error conventions (hf-api.md §0, §1.8)."""

from __future__ import annotations

import hashlib
import json
import secrets
import string
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

SIM_HEADER = ("X-Simulated", "Hugging Face simulator")
INVALID_CREDENTIALS = "Invalid credentials in Authorization header"


class BadBody(Exception):
    """A request body the real API rejects with a plain-text 400 (serde-style message, not JSON)."""


def hf_error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """`{"error": message}`; 401s also carry X-Error-Message, as the Hub does."""
    out = dict(headers or {})
    if status == 401:
        out.setdefault("X-Error-Message", message)
    return web.json_response({"error": message}, status=status, headers=out)


def unauthorized() -> web.Response:
    return hf_error(401, INVALID_CREDENTIALS)


def plain_400(message: str) -> web.Response:
    return web.Response(status=400, text=message, content_type="text/plain")


def rate_limited(retry_after: int) -> web.Response:
    headers = {
        "Retry-After": str(retry_after),
        "RateLimit": f'"api";r=0;t={retry_after}',
        "RateLimit-Policy": '"fixed window";"api";q=500;w=300',
    }
    return hf_error(429, "You have exceeded our rate limit. Retry later.", headers)


async def read_body(request: web.Request) -> dict[str, Any]:
    """Parse a JSON object body; failures read like the Endpoints API's serde errors."""
    raw = await request.read()
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadBody(f"Failed to parse the request body as JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadBody("Failed to parse the request body as JSON: invalid type: expected a map at line 1 column 1")
    return body


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_of(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def endpoint_id() -> str:
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(16))


def hex_id(seed: str | None = None) -> str:
    """A 24-hex id like Hub object ids; stable when seeded (users, orgs), random otherwise (jobs)."""
    if seed is None:
        return secrets.token_hex(12)
    return hashlib.sha256(seed.encode()).hexdigest()[:24]


def bearer(request: web.Request) -> str | None:
    value = request.headers.get("Authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
