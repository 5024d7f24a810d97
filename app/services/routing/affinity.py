"""A conversation stays where its cache is.

Engines with a prompt cache (llama.cpp, vLLM, SGLang) answer a conversation's next turn fast only on the
copy that holds the earlier turns. Each chat request's messages are hashed as a chain (one digest per
leading run of messages); the copy that served it is remembered under the digest of the whole list. A
later request whose leading messages match one remembered goes to that copy while its load allows.

Kept in memory only, bounded (least recently used first out), and holding digests, never text.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from app.services.backends.base import Upstream

MAX_CONVERSATIONS = 4096


def prefix_digests(model: str, messages: list[Any]) -> list[bytes]:
    """Digest of each leading run of messages: [first 1, first 2, ... all], tied to the model."""
    digests = []
    running = hashlib.sha256(model.encode())
    for message in messages:
        try:
            encoded = json.dumps(message, sort_keys=True, separators=(",", ":"), default=str).encode()
        except (TypeError, ValueError):
            encoded = repr(message).encode()
        running.update(hashlib.sha256(encoded).digest())
        digests.append(running.copy().digest())
    return digests


class AffinityBook:
    def __init__(self, limit: int = MAX_CONVERSATIONS) -> None:
        self._served: OrderedDict[bytes, str] = OrderedDict()
        self.limit = limit

    def lookup(self, model: str, messages: Any) -> str | None:
        """The upstream key that served the longest earlier request this one continues, if any."""
        if not isinstance(messages, list) or len(messages) < 2:
            return None
        for digest in reversed(prefix_digests(model, messages)[:-1]):
            key = self._served.get(digest)
            if key is not None:
                self._served.move_to_end(digest)
                return key
        return None

    def remember(self, model: str, messages: Any, upstream_key: str) -> None:
        if not isinstance(messages, list) or not messages:
            return
        digest = prefix_digests(model, messages)[-1]
        self._served[digest] = upstream_key
        self._served.move_to_end(digest)
        while len(self._served) > self.limit:
            self._served.popitem(last=False)

    def __len__(self) -> int:
        return len(self._served)


def prefer_affine(candidates: list[Upstream], key: str | None) -> list[Upstream]:
    """The copy that served the conversation's last turn first, while it has room; never a rented copy
    ahead of a LAN one (the rented policy still decides when money is spent)."""
    found = next((u for u in candidates if u.key == key), None) if key else None
    if found is None or found.in_flight >= found.capacity:
        return candidates
    if found.kind == "rented" and candidates[0].kind != "rented":
        return candidates
    return [found, *(u for u in candidates if u is not found)]
