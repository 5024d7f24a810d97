"""Credentials live in the OS keyring and nowhere else.

Each node has its own keyring namespace (service ``pairwise:<node uuid>``) so
two nodes on one machine never read each other's secrets. Values that pass
through here are remembered so the log filter can redact them should one ever
reach a log line by accident.
"""

from __future__ import annotations

import logging
import sys
import threading

import keyring
import keyring.errors

from app.services.errors import CredentialError
from app.services.redaction import redact_shapes

# keyring picks its backend by importing every installed one. Its macOS backend's helper module looks
# for the Security framework with ctypes' find_library, which off macOS runs ldconfig and gcc (about
# 50 ms of a node's start, on the way to its first answer: the reconcile at start reads the keyring)
# and then fails anyway (the framework's symbols are not there), so that backend is never viable off
# macOS. Refusing the helper's import at once gives keyring the same failure without the search.
if sys.platform != "darwin":
    sys.modules.setdefault("keyring.backends.macOS.api", None)  # type: ignore[arg-type]

_known_secrets: set[str] = set()
_lock = threading.Lock()


def _remember(value: str) -> None:
    if len(value) >= 6:
        with _lock:
            _known_secrets.add(value)


def redact(text: str) -> str:
    with _lock:
        secrets = list(_known_secrets)
    for value in secrets:
        if value in text:
            text = text.replace(value, "[redacted]")
    # And those it never saw, by their shape (an engine's or a peer's words, a pasted URL).
    return redact_shapes(text)


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


HEADLESS_HINT = ("no OS credential store is available (on Linux: no Secret Service on the session bus). "
                 "On a headless machine run Pairwise inside a user session with one, e.g. "
                 "dbus-run-session -- sh -c 'gnome-keyring-daemon --unlock --components=secrets </dev/null; "
                 "pairwise serve' (README: 'Headless machines'); macOS uses the login Keychain, Windows the "
                 "Credential Manager")


class NoCredentialStore(CredentialError):
    title = "No credential store"


_warned_missing = False

# The demo's credentials (the simulated provider's token, worth nothing) in this process's memory
# instead of the OS keyring, so `pairwise demo` runs where no keyring is; None everywhere else. Only
# ``keep_in_memory`` (called by the demo alone) turns it on: a real node's credentials never land here.
_memory: dict[tuple[str, str], str] | None = None


def keep_in_memory() -> None:
    """From now on this process keeps credentials in memory only (the demo: simulated tokens)."""
    global _memory
    if _memory is None:
        _memory = {}


def in_memory() -> bool:
    return _memory is not None


def _missing_store(key: str) -> None:
    global _warned_missing
    if not _warned_missing:
        _warned_missing = True
        logging.getLogger(__name__).warning("credentials unavailable (first asked for %s): %s", key, HEADLESS_HINT)


class SecretStore:
    """The node's credentials in the OS keyring.

    Without any credential store (a headless Linux machine without a Secret Service), reading and
    deleting answer "nothing stored" (nothing can have been stored through no store), so commands
    that need no credential work; storing, or requiring, a credential fails with one line naming
    what is missing and how to provide it."""

    def __init__(self, namespace: str) -> None:
        self.service = f"pairwise:{namespace}"

    def set(self, key: str, value: str) -> None:
        if not value:
            raise CredentialError(f"refused to store an empty credential for {key}")
        if _memory is not None:
            _memory[(self.service, key)] = value
            _remember(value)
            return
        try:
            keyring.set_password(self.service, key, value)
        except keyring.errors.NoKeyringError as exc:
            raise NoCredentialStore(f"cannot keep the credential for {key}: {HEADLESS_HINT}") from exc
        except keyring.errors.KeyringError as exc:
            raise CredentialError(f"the OS keyring refused to store the credential for {key}: {exc}") from exc
        _remember(value)

    def get(self, key: str) -> str | None:
        if _memory is not None:
            return _memory.get((self.service, key))
        try:
            value = keyring.get_password(self.service, key)
        except keyring.errors.NoKeyringError:
            _missing_store(key)
            return None
        except keyring.errors.KeyringError as exc:
            raise CredentialError(f"the OS keyring could not be read for {key}: {exc}") from exc
        if value:
            _remember(value)
        return value

    def require(self, key: str) -> str:
        value = self.get(key)
        if not value:
            if _memory is None and not store_available():
                raise NoCredentialStore(f"the credential for {key} is needed, but {HEADLESS_HINT}")
            raise CredentialError(f"no credential for {key} in the OS keyring")
        return value

    def delete(self, key: str) -> None:
        if _memory is not None:
            _memory.pop((self.service, key), None)
            return
        try:
            keyring.delete_password(self.service, key)
        except (keyring.errors.PasswordDeleteError, keyring.errors.NoKeyringError):
            pass
        except keyring.errors.KeyringError as exc:
            raise CredentialError(f"the OS keyring could not delete the credential for {key}: {exc}") from exc


def store_available() -> bool:
    """Is there an OS credential store at all (not the keyring package's "fail" stand-in)?"""
    from keyring.backends import fail

    return not isinstance(keyring.get_keyring(), fail.Keyring)
