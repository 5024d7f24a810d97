#!/usr/bin/env bash
# The README's test command: sets everything up on a fresh machine, then runs
# ruff, mypy and the whole test suite under a private D-Bus session with an
# unlocked gnome-keyring, so credential paths use a real Secret Service.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v gnome-keyring-daemon >/dev/null || need_apt+=(gnome-keyring)
command -v dbus-run-session >/dev/null || need_apt+=(dbus)
command -v curl >/dev/null || need_apt+=(curl)
for lib in libxcb-cursor0 libxkbcommon-x11-0 libegl1 libgl1 libfontconfig1 libdbus-1-3; do
  dpkg -s "$lib" >/dev/null 2>&1 || need_apt+=("$lib")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_apt[@]}" >/dev/null
fi

scripts/setup.sh test

exec dbus-run-session -- bash scripts/_test_in_session.sh "$@"
