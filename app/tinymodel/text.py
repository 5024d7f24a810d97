"""Pure, deterministic text functions: the "model" of the tiny model server."""

from __future__ import annotations

import hashlib
import math

# A small fixed vocabulary; replies are readable enough to eyeball in a demo.
_WORDS: tuple[str, ...] = (
    "the", "cluster", "answers", "quickly", "and", "a", "model", "speaks", "softly", "to",
    "every", "machine", "in", "house", "while", "tokens", "flow", "through", "one", "door",
    "rented", "gpu", "wakes", "from", "sleep", "sponsor", "pays", "per", "minute", "hello",
    "world", "stream", "chunk", "reply", "tiny", "deterministic", "words", "fall", "like", "rain",
)


def reply_tokens(prompt: str, max_tokens: int) -> list[str]:
    """Return `max_tokens` tokens derived from the prompt; every token but the first starts with a space."""
    count = max(0, max_tokens)
    tokens: list[str] = []
    counter = 0
    pool = b""
    while len(tokens) < count:
        if not pool:
            pool = hashlib.sha256(f"{counter}:{prompt}".encode()).digest()
            counter += 1
        word = _WORDS[pool[0] % len(_WORDS)]
        pool = pool[1:]
        tokens.append(word if not tokens else " " + word)
    return tokens


def count_tokens(text: str) -> int:
    """Whitespace token count, at least 1 so usage never reports an empty prompt."""
    return max(1, len(text.split()))


def embed(text: str, dim: int) -> list[float]:
    """A deterministic unit-norm vector for the text."""
    size = max(1, dim)
    values: list[float] = []
    counter = 0
    while len(values) < size:
        block = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        counter += 1
        for i in range(0, len(block), 2):
            if len(values) == size:
                break
            # Map two bytes to [-1, 1).
            values.append(int.from_bytes(block[i : i + 2], "big") / 32768.0 - 1.0)
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]
