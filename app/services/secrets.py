"""Credentials live in the OS keyring and nowhere else.

Each node has its own keyring namespace (service ``pairwise:<node uuid>``) so
two nodes on one machine never read each other's secrets. Values that pass
through here are remembered so the log filter can redact them should one ever
reach a log line by accident.
"""

from __future__ import annotations

import logging
import threading

import keyring
import keyring.errors

from app.services.errors import CredentialError

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
    return text


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class SecretStore:
    def __init__(self, namespace: str) -> None:
        self.service = f"pairwise:{namespace}"

    def set(self, key: str, value: str) -> None:
        if not value:
            raise CredentialError(f"refused to store an empty credential for {key}")
        try:
            keyring.set_password(self.service, key, value)
        except keyring.errors.KeyringError as exc:
            raise CredentialError(f"the OS keyring refused to store the credential for {key}: {exc}") from exc
        _remember(value)

    def get(self, key: str) -> str | None:
        try:
            value = keyring.get_password(self.service, key)
        except keyring.errors.KeyringError as exc:
            raise CredentialError(f"the OS keyring could not be read for {key}: {exc}") from exc
        if value:
            _remember(value)
        return value

    def require(self, key: str) -> str:
        value = self.get(key)
        if not value:
            raise CredentialError(f"no credential for {key} in the OS keyring")
        return value

    def delete(self, key: str) -> None:
        try:
            keyring.delete_password(self.service, key)
        except keyring.errors.PasswordDeleteError:
            pass
        except keyring.errors.KeyringError as exc:
            raise CredentialError(f"the OS keyring could not delete the credential for {key}: {exc}") from exc
