"""Whether a real, unlocked Secret Service is here (the test command starts one)."""

from __future__ import annotations

import pytest


def require_secret_service() -> None:
    try:
        import keyring
        from keyring.backends.SecretService import Keyring

        if not isinstance(keyring.get_keyring(), Keyring):
            pytest.skip("the keyring backend is not the Secret Service; run the README's test command")
        keyring.set_password("pairwise-test-probe", "probe", "ok")
        if keyring.get_password("pairwise-test-probe", "probe") != "ok":
            pytest.skip("the Secret Service did not keep a secret; run the README's test command")
    except Exception as exc:  # any failure here means no usable Secret Service
        pytest.skip(f"no Secret Service ({type(exc).__name__}); run the README's test command")
