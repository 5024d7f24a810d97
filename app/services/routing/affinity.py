"""A conversation stays where its cache is.

Engines with a prompt cache (llama.cpp, vLLM, SGLang) answer a conversation's next turn fast only on the
copy that holds the earlier turns. Each chat request's messages are hashed as a chain (one digest per
leading run of messages); the copy that served it is remembered under the digest of the whole list. A
later request whose leading messages match one remembered goes to that copy while its load allows.

A prompt without messages (Ollama's ``/api/generate``, OpenAI's ``/v1/completions``) continues in two
ways. With Ollama's ``context`` (the tokens the last answer returned), it is the conversation whose answer
returned that context: each answer's context is remembered when it ends. Without one, a prompt that
repeats an earlier one's beginning (the same system text and document, another question) is where
that copy's prefix cache helps: the prompt is hashed in chunks of ``CHUNK_BYTES`` as a chain, and a
request goes to the copy that served the longest earlier prompt it starts with. Only a few positions
of a long prompt's chain are kept (``kept_positions``), so one long prompt cannot crowd out the rest.

Kept in memory only, bounded (least recently used first out), and holding digests, never text.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from app.services.backends.base import Upstream

MAX_CONVERSATIONS = 4096
CHUNK_BYTES = 1024  # about 300 tokens: less shared prefix saves little prefill
CONTEXT_BLOCK = 256  # tokens of an Ollama context per link of its chain


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


def _chain(tag: bytes, model: str, parts: list[bytes]) -> list[bytes]:
    running = hashlib.sha256(tag + model.encode())
    digests = []
    for part in parts:
        running.update(hashlib.sha256(part).digest())
        digests.append(running.copy().digest())
    return digests


def prompt_digests(model: str, body: dict[str, Any]) -> list[bytes]:
    """A prompt's chain: its system text, then each CHUNK_BYTES of the prompt (the last one partial)."""
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]  # OpenAI's one-prompt list
    if not isinstance(prompt, str) or not prompt:
        return []
    system = body.get("system")
    encoded = prompt.encode()
    parts = [system.encode() if isinstance(system, str) else b""]
    parts += [encoded[i:i + CHUNK_BYTES] for i in range(0, len(encoded), CHUNK_BYTES)]
    return _chain(b"prompt:", model, parts)[1:]


def context_digests(model: str, context: Any) -> list[bytes]:
    """An Ollama context's chain: CONTEXT_BLOCK tokens a link (the last one partial)."""
    if not isinstance(context, list) or not context or not all(isinstance(t, int) for t in context):
        return []
    parts = [",".join(map(str, context[i:i + CONTEXT_BLOCK])).encode() for i in range(0, len(context), CONTEXT_BLOCK)]
    return _chain(b"context:", model, parts)


def kept_positions(count: int) -> list[int]:
    """The links of a chain worth keeping: the 1st, 2nd, 4th, 8th... and the last (a shared beginning
    matches at the longest kept link inside it, a continued prompt at the last)."""
    kept, at = [], 1
    while at < count:
        kept.append(at - 1)
        at *= 2
    return [*kept, count - 1] if count else []


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
        self._keep(prefix_digests(model, messages)[-1], upstream_key)

    def lookup_prompt(self, model: str, body: dict[str, Any]) -> str | None:
        """The copy that served the conversation an Ollama ``context`` continues, else the longest earlier
        prompt this one starts with."""
        context = body.get("context")
        chain = context_digests(model, context) if context else prompt_digests(model, body)
        for digest in reversed(chain):
            key = self._served.get(digest)
            if key is not None:
                self._served.move_to_end(digest)
                return key
        return None

    def remember_prompt(self, model: str, body: dict[str, Any], upstream_key: str) -> None:
        chain = prompt_digests(model, body)
        for index in kept_positions(len(chain)):
            self._keep(chain[index], upstream_key)

    def remember_context(self, model: str, context: Any, upstream_key: str) -> None:
        """An answer's context: the next turn, which sends it back, goes to the same copy."""
        chain = context_digests(model, context)
        if chain:
            self._keep(chain[-1], upstream_key)

    def _keep(self, digest: bytes, upstream_key: str) -> None:
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
