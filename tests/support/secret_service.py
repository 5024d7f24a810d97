"""Whether a real, unlocked Secret Service is here (the test command starts one)."""

from __future__ import annotations

import pytest


def require_secret_service() -> None:
    try:
        import secretstorage

        bus = secretstorage.dbus_init()
        collection = secretstorage.get_default_collection(bus)
        if collection.is_locked():
            pytest.skip("the Secret Service collection is locked; run the README's test command")
    except Exception as exc:  # any failure here means no usable Secret Service
        pytest.skip(f"no Secret Service ({type(exc).__name__}); run the README's test command")
