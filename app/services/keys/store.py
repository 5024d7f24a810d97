"""Named keys for callers of this node: made once, shown once, kept only as a hash.

A key is ``pw-`` followed by 32 URL-safe characters (24 random bytes, 192 bits). Only its
SHA-256 digest is written (``keys.json`` in the home, 0600), with the key's name and limits.

Why SHA-256 and not a password hash (scrypt, argon2): a password hash is slow on purpose
because passwords are guessable; a 192-bit random key is not, so a stolen ``keys.json`` gives
nothing to brute-force, while a slow hash would cost tens of milliseconds on every request
and hand anyone on the LAN a lever to burn this machine's CPU with wrong keys. A presented
key is hashed and compared with every stored digest by ``hmac.compare_digest`` (constant
time, and no early exit), so timing tells nothing about which digest came close.

Keys are local to the node that made them. Revoking keeps the record (marked revoked) so a
refusal can say the key was revoked, and takes effect at once: the running node reads this
store on every request.

Public API: ``KeyStore(path)``: ``create(name, ...) -> (KeyRecord, key)``, ``revoke(name)``,
``list()``, ``get(name)``, ``verify(presented) -> KeyRecord`` (raises ``KeyRefused``),
``count_active()``; ``KeyRecord`` (``public_json``, ``allows_model``); ``KEY_PREFIX``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from app.home import save_private
from app.services.errors import ConfigError, NotFound, RefusedError

if TYPE_CHECKING:
    from app.services.api.snapshots import KeyRow

log = logging.getLogger(__name__)

KEY_PREFIX = "pw-"
KEY_RANDOM_BYTES = 24  # 32 URL-safe characters after the prefix
NAME_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
OffLan = Literal["allow", "deny"]


class KeyRefused(RefusedError):
    """A missing, unknown or revoked key (401 on the wire)."""

    title = "Key refused"
    status = 401


def digest_of(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass
class KeyRecord:
    name: str
    digest: str  # SHA-256 of the key, hex; the key itself is never kept
    created_at: float = field(default_factory=time.time)
    models: list[str] = field(default_factory=list)  # fnmatch patterns; empty = every model
    off_lan: OffLan = "allow"
    usd_per_day: float | None = None
    requests_per_min: int | None = None
    revoked_at: float | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def allows_model(self, model: str) -> bool:
        return models_allow(self.models, model)

    def public_json(self) -> KeyRow:
        """Everything but the digest (which is no secret, but has no use outside this store)."""
        return {"name": self.name, "created_at": self.created_at, "models": list(self.models), "off_lan": self.off_lan,
                "usd_per_day": self.usd_per_day, "requests_per_min": self.requests_per_min,
                "revoked_at": self.revoked_at, "state": "active" if self.active else "revoked"}


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(KEY_RANDOM_BYTES)


class KeyStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._records: dict[str, KeyRecord] = self._load()
        # Told of each revocation once it is saved (the doors end that key's running streams).
        self.revoked_listeners: list[Callable[[KeyRecord], None]] = []

    # -- changes ---------------------------------------------------------------------------------------------

    def create(self, name: str, *, models: list[str] | None = None, off_lan: str = "allow",
               usd_per_day: float | None = None, requests_per_min: int | None = None) -> tuple[KeyRecord, str]:
        """A new key: its record, and the key itself (to be shown once, then forgotten)."""
        if not isinstance(name, str) or not NAME_RULE.match(name):
            raise ConfigError("a key name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        if off_lan not in ("allow", "deny"):
            raise ConfigError(f"off_lan must be 'allow' or 'deny', not {off_lan!r}")
        if usd_per_day is not None and (not isinstance(usd_per_day, (int, float)) or usd_per_day < 0):
            raise ConfigError("usd_per_day must be a number of dollars, 0 or more")
        if requests_per_min is not None and (not isinstance(requests_per_min, int) or requests_per_min < 1):
            raise ConfigError("requests_per_min must be a whole number, 1 or more")
        patterns = [p.strip() for p in models or [] if isinstance(p, str) and p.strip()]
        with self._lock:
            existing = self._records.get(name)
            if existing is not None and existing.active:
                raise ConfigError(f"a key named {name!r} exists; revoke it first ('pairwise keys revoke {name}')")
            key = new_key()
            record = KeyRecord(name=name, digest=digest_of(key), models=patterns, off_lan=cast(OffLan, off_lan),
                               usd_per_day=float(usd_per_day) if usd_per_day is not None else None,
                               requests_per_min=requests_per_min)
            self._save({**self._records, name: record}, f"key {name}")  # saved first, then in force
            self._records[name] = record
        log.info("key %s created", name)
        return record, key

    def revoke(self, name: str) -> KeyRecord:
        with self._lock:
            record = self._records.get(name)
            if record is None:
                raise NotFound(f"no key named {name!r}")
            if record.active:
                revoked = replace(record, revoked_at=time.time())
                # Saved first: a revocation the disk refuses is refused, never in force until a restart.
                self._save({**self._records, name: revoked}, f"revoking key {name}")
                self._records[name] = record = revoked
        log.info("key %s revoked", name)
        for listener in list(self.revoked_listeners):
            listener(record)
        return record

    # -- reading ---------------------------------------------------------------------------------------------

    def get(self, name: str) -> KeyRecord | None:
        return self._records.get(name)

    def list(self) -> list[KeyRecord]:
        return sorted(self._records.values(), key=lambda r: r.created_at)

    def count_active(self) -> int:
        return sum(1 for r in self._records.values() if r.active)

    def verify(self, presented: str | None) -> KeyRecord:
        """The record of a presented key, or ``KeyRefused`` saying why (never echoing the key)."""
        if not presented:
            raise KeyRefused("refused: this door needs a key (send 'Authorization: Bearer pw-...'; "
                             "make one with 'pairwise keys create NAME')")
        if not presented.startswith(KEY_PREFIX):
            raise KeyRefused("refused: the bearer token is not a Pairwise key (keys start with 'pw-')")
        wanted = digest_of(presented)
        found: KeyRecord | None = None
        for record in list(self._records.values()):
            if hmac.compare_digest(record.digest, wanted):  # every digest compared: no early exit
                found = record
        if found is None:
            raise KeyRefused("refused: the key is not one this node made (unknown key)")
        if not found.active:
            raise KeyRefused(f"refused: key {found.name!r} was revoked")
        return found

    # -- file ------------------------------------------------------------------------------------------------

    def _load(self) -> dict[str, KeyRecord]:
        if not self.path.exists():
            return {}
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))["keys"]
            records = [KeyRecord(**row) for row in rows]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # Refusing every key is the safe side of a damaged file; say so rather than start empty silently.
            raise ConfigError(f"{self.path} is damaged ({exc}); move it away to start with no keys") from exc
        return {r.name: r for r in records}

    def _save(self, records: dict[str, KeyRecord], what: str) -> None:
        data = {"keys": [asdict(r) for r in records.values()]}
        save_private(self.path, json.dumps(data, indent=1).encode(), what)


def models_allow(patterns: list[str], model: str) -> bool:
    """Whether a key with these model patterns (none: every model) may use ``model``."""
    if not patterns:
        return True
    bare = model.removesuffix(":latest")
    return any(fnmatch.fnmatchcase(model, p) or fnmatch.fnmatchcase(bare, p) for p in patterns)
