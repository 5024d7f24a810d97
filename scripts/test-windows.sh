#!/usr/bin/env bash
# The Windows lane: Windows' own CPython 3.12 under Wine runs the node, the CLI and the tray, and
# the platform layer's Windows branches (tests/windows/suite). Builds its environment once and caches it
# under $PAIRWISE_WINE_CACHE (default ~/.cache/pairwise-wine); see README "Platforms".
#
#   scripts/test-windows.sh               the whole Windows suite
#   scripts/test-windows.sh -k tray       pytest options pass through
set -euo pipefail
# Windows' CPython is an x86-64 build, and Wine runs x86-64 Windows programs only on an x86-64 host;
# on any other CPU (an arm64 runner, an Apple machine) there is nothing this lane can run.
case "$(uname -m)" in
    x86_64|amd64) ;;
    *) echo "windows lane: skipped on $(uname -m) (Wine runs Windows' x86-64 CPython only on an x86-64 host)" >&2; exit 0 ;;
esac
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
VENV_PY="${VENV_PY:-$ROOT/.venv/bin/python}"
[ -x "$VENV_PY" ] || VENV_PY="$(command -v python3)"
began=$(date +%s)

HOST_PY="$VENV_PY" tests/windows/setup.sh
CACHE="${PAIRWISE_WINE_CACHE:-$HOME/.cache/pairwise-wine}"
export WINEPREFIX="$CACHE/prefix" WINEDEBUG=-all PAIRWISE_WINE_CACHE="$CACHE"
# This checkout on the embeddable Python's path (its ._pth ignores PYTHONPATH).
printf '%s\n' "$(winepath -w "$ROOT")" > "$CACHE/python/Lib/site-packages/pairwise-checkout.pth"
ready=$(date +%s)

# One wineserver for the whole run (each Windows process would otherwise start its own), and a
# virtual display for the tray.
wineserver -p 2>/dev/null || true  # already running: fine
XVFB_PID=""
cleanup() {
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
    wineserver -k 2>/dev/null || true
}
trap cleanup EXIT
if command -v Xvfb >/dev/null; then
    DISPLAY_NUM=$(( 90 + RANDOM % 400 ))
    Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
    XVFB_PID=$!
    export DISPLAY=":$DISPLAY_NUM"
fi

status=0
PYTHONPATH="$ROOT" PAIRWISE_MDNS=off PAIRWISE_WINDOWS_LANE=1 "$VENV_PY" -m pytest -q -p no:cacheprovider -o testpaths=tests/windows/suite \
    --timeout 900 tests/windows/suite/test_windows.py "$@" || status=$?
echo "windows lane: environment $(( ready - began )) s, suite $(( $(date +%s) - ready )) s" >&2
exit $status
