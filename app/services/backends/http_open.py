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


def keep_alive_only(chunk: bytes, content_type: str) -> bool:
    """True when an event stream's bytes so far are only SSE comments (``: ping``) and blank lines.

    An engine may send such comments while it reads a long prompt (llama-cpp-python's server does every
    15 s). They are not the answer's first byte: taking them as it would commit the request to an engine
    that has not answered (no failover after it) and date the first byte at the first ping."""
    if "text/event-stream" not in content_type:
        return False
    return all(not line.strip() or line.lstrip().startswith(b":") for line in chunk.split(b"\n"))
