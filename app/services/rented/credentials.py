"""``TokenProvider``: the one place a rented node's bearer token is read, at the moment a request is sent.

A node's own token lives in the keyring under ``rented:<name>``; a node without one borrows from the
``fallbacks`` (a provider's signed-in account, registered by its feature). Nodes never hold a copy:
they ask here per request, so a sign-in, a sign-out and ``rented set --token-stdin`` reach
existing nodes at once, without a restart. Reads are cached (a keyring read can cost milliseconds on
the request path) until ``invalidate()``, which the manager calls on every sign-in, sign-out and token
change.
"""

from __future__ import annotations

from collections.abc import Callable

from app.services.rented.decl import RentedDecl
from app.services.rented.store import secret_key
from app.services.secrets import SecretStore

Fallback = Callable[[RentedDecl], "str | None"]


class TokenProvider:
    def __init__(self, secrets: SecretStore) -> None:
        self.secrets = secrets
        self.fallbacks: list[Fallback] = []
        self._cache: dict[str, str | None] = {}

    def get(self, decl: RentedDecl) -> str | None:
        if decl.name in self._cache:
            return self._cache[decl.name]
        token = self.secrets.get(secret_key(decl.name)) if decl.has_credential else None
        for fallback in self.fallbacks:
            if token:
                break
            token = fallback(decl)
        self._cache[decl.name] = token or None
        return token or None

    def source(self, decl_of: Callable[[], RentedDecl]) -> Callable[[], str | None]:
        """What a node calls before each request: the token of its current declaration."""
        return lambda: self.get(decl_of())

    def invalidate(self, name: str | None = None) -> None:
        if name is None:
            self._cache.clear()
        else:
            self._cache.pop(name, None)
