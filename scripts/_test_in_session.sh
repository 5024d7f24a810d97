#!/usr/bin/env bash
# Runs inside dbus-run-session (see scripts/test.sh).
set -euo pipefail
export QT_QPA_PLATFORM=offscreen PAIRWISE_MDNS=off
# A throwaway keyring password: this keyring lives only as long as the session.
# Its own data dir, so a keyring left by an earlier run (with another password) cannot get in the way.
keyring_home=$(mktemp -d)
trap 'rm -rf "$keyring_home"' EXIT
eval "$(printf 'pairwise-test' | XDG_DATA_HOME="$keyring_home" gnome-keyring-daemon --replace --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
.venv/bin/python - <<'PY'
import keyring
from keyring.backends.SecretService import Keyring
assert isinstance(keyring.get_keyring(), Keyring), f"expected the Secret Service, got {keyring.get_keyring()}"
keyring.set_password("pairwise-test-probe", "probe", "ok")
assert keyring.get_password("pairwise-test-probe", "probe") == "ok", "gnome-keyring did not unlock"
keyring.delete_password("pairwise-test-probe", "probe")
print("Secret Service ready")
PY
.venv/bin/ruff check app tests bench
.venv/bin/mypy app
# Windows and macOS branches type-check too (each platform keeps its own cache, so reruns stay quick).
.venv/bin/mypy --platform win32 --cache-dir .mypy_cache/win32 app
.venv/bin/mypy --platform darwin --cache-dir .mypy_cache/darwin app
.venv/bin/pytest -n 2 -q -p no:cacheprovider "$@"
