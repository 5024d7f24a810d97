"""The words of a requester-limit refusal, in one place: written by the node that enforces the
limit, read back by the node whose caller it was (over the relay, as a 429's message). The same for
a refusal by policy (a rented node's budget cap reached, sharing off): a 403 that names the node.

A rate refusal ends with ``retry after N s`` (also sent as ``Retry-After``); a daily cap says
when it resets (00:00 UTC) and carries no retry hint, since retrying before then cannot help.
"""

from __future__ import annotations

import re

from app.services.errors import RequesterLimitError, UpstreamRefused
from app.services.routing.plan import REFUSED_HERE

_RETRY = re.compile(r"retry after (\d+) s")
_RELAY_PREFIX = " answered 429: "
_REFUSED_PREFIX = " answered 403: "


def spend_refusal(who: str, cap: float, spent: float, where: str, resets: str) -> RequesterLimitError:
    return RequesterLimitError(f"refused: {who} reached its ${cap:g}/day on {where} (spent ${spent:.2f} today); "
                               f"the cap resets at 00:00 UTC ({resets})")


def rate_refusal(who: str, per_min: int, where: str, retry_after_s: int) -> RequesterLimitError:
    return RequesterLimitError(f"refused: {who} is over its {per_min} requests/min on {where}; "
                               f"retry after {retry_after_s} s", retry_after_s=retry_after_s)


def limit_from_peer(message: str) -> RequesterLimitError:
    """A sponsor's 429 as our own limit error: its words without the transport's prefix, and its wait."""
    text = message.split(_RELAY_PREFIX, 1)[-1]
    found = _RETRY.search(text)
    return RequesterLimitError(text, retry_after_s=int(found.group(1)) if found else None)


def refusal_from_peer(message: str) -> UpstreamRefused | None:
    """A peer's 403 as a refusal by its policy, in its words; None for any other 403 (it no longer
    pins us, say), which stays an upstream failure."""
    _, found, text = message.partition(_REFUSED_PREFIX)
    if not found or REFUSED_HERE not in text:
        return None
    return UpstreamRefused(text)
