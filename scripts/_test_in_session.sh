#!/usr/bin/env bash
# Runs inside dbus-run-session (see scripts/test.sh).
set -euo pipefail
export QT_QPA_PLATFORM=offscreen PAIRWISE_MDNS=off
# A throwaway keyring password: this keyring lives only as long as the session.
eval "$(printf 'pairwise-test' | gnome-keyring-daemon --replace --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
.venv/bin/python - <<'PY'
import secretstorage
bus = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(bus)
assert not collection.is_locked(), "gnome-keyring did not unlock"
print("Secret Service ready:", collection.get_label() or "default collection")
PY
.venv/bin/ruff check app tests bench
.venv/bin/mypy app
.venv/bin/pytest -n 2 -q -p no:cacheprovider "$@"
