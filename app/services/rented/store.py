"""Where rented-node declarations live: ``rented.json`` in the node's home (0600).

Kept apart from settings.json so the rented feature owns its file; the file holds
declarations only (``has_credential`` says whether the keyring holds a token), never a token.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.home import Home, write_private
from app.services.errors import ConfigError
from app.services.rented.decl import RentedDecl, RuleBook, validate_decl


def rented_file(home: Home) -> Path:
    return home.rented_file


class RentedStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of(cls, home: Home) -> RentedStore:
        return cls(rented_file(home))

    def load(self, book: RuleBook | None = None) -> list[RentedDecl]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ConfigError(f"{self.path} is not valid JSON: {exc}") from exc
        return [validate_decl(item, book) for item in data.get("rented_nodes", [])]

    def save(self, decls: list[RentedDecl]) -> None:
        body = {"rented_nodes": [d.public_json() for d in decls]}
        write_private(self.path, json.dumps(body, indent=2).encode())


def secret_key(name: str) -> str:
    """The keyring key of a rented node's token, under the sponsor's namespace (``pairwise:<node id>``)."""
    return f"rented:{name}"
