"""What an upstream's HTTP answer means, whichever client read it.

Statuses that mean "try someone else" (404, 408, 429, 5xx) become an
UpstreamError before anything reaches the caller (``stream_client``); other
errors are handed back so the caller sees the upstream's own complaint (in its
own API shape), trimmed by ``error_text``.
"""

from __future__ import annotations

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
