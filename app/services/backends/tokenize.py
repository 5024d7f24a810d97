"""An engine's own token count, from its tokenizer endpoint, for fit decisions near a window's edge.

    llama.cpp server    POST /tokenize {"content": text}            -> {"tokens": [...]}
    vLLM                POST /tokenize {"model": m, "prompt": text}  -> {"count": n, "tokens": [...]}
    llama-cpp-python    POST /extras/tokenize/count {"input": text}  -> {"count": n}

One body serves the first two (each reads its own key). The route that answered is kept; an engine
with none is not asked again for ``RETRY_AFTER_S``. Each ask is bounded by ``TIMEOUT_S``: a slow or
missing tokenizer costs a request at most that, and the conservative estimate decides instead.
"""

from __future__ import annotations

import time

import httpx

TIMEOUT_S = 2.0
RETRY_AFTER_S = 300.0
MAX_TEXT_BYTES = 4 << 20  # what the front door's body cap lets through, about
ROUTES = ("/tokenize", "/extras/tokenize/count")


def _body(route: str, model: str, text: str) -> dict[str, str]:
    if route == "/tokenize":
        return {"content": text, "prompt": text, "model": model}
    return {"input": text, "model": model}


def _count(answer: object) -> int | None:
    if not isinstance(answer, dict):
        return None
    count = answer.get("count")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        return count
    tokens = answer.get("tokens")
    return len(tokens) if isinstance(tokens, list) else None


class Tokenizer:
    def __init__(self, client: httpx.AsyncClient, base_url: str, headers: dict[str, str]) -> None:
        self.client, self.base_url, self.headers = client, base_url, headers
        self.route: str | None = None  # the route that answered last
        self._none_until = 0.0  # no route answered: not asked again before this (monotonic)

    async def count(self, model: str, text: str) -> int | None:
        if not text or len(text) > MAX_TEXT_BYTES or time.monotonic() < self._none_until:
            return None
        routes = [self.route] if self.route else list(ROUTES)
        for route in routes:
            try:
                response = await self.client.post(self.base_url + route, json=_body(route, model, text),
                                                  headers=self.headers, timeout=TIMEOUT_S)
                count = _count(response.json()) if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError):
                count = None
            if count:  # zero tokens for some text is a body the engine did not read
                self.route = route
                return count
        if self.route is None:
            self._none_until = time.monotonic() + RETRY_AFTER_S
        self.route = None
        return None
