#!/usr/bin/env bash
# Start a built Pairwise headless (`serve`) with a throwaway home, ask its front door and its
# control API for an answer, stop it with SIGTERM and check it exits cleanly.
#
#   packaging/check_build.sh dist/pairwise/pairwise
set -euo pipefail

APP="${1:?usage: check_build.sh PATH/TO/pairwise}"
HOME_DIR="$(mktemp -d)"
LOG="$HOME_DIR/serve.log"
cleanup() { [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null || true; rm -rf "$HOME_DIR"; }
trap cleanup EXIT

PAIRWISE_MDNS=off "$APP" --home "$HOME_DIR/home" serve --listen 127.0.0.1:0 --cluster-listen 127.0.0.1:0 \
    --name built-check >"$LOG" 2>&1 &
PID=$!

for _ in $(seq 1 150); do
    if grep -qs "serving on" "$LOG"; then break; fi
    if ! kill -0 "$PID" 2>/dev/null; then echo "the built app exited:"; cat "$LOG"; exit 1; fi
    sleep 0.2
done
ADDRESS="$(sed -n 's/.*serving on http:\/\/\([0-9.:]*\).*/\1/p' "$LOG" | head -1)"
[ -n "$ADDRESS" ] || { echo "the built app did not start:"; cat "$LOG"; exit 1; }

VERSION="$(curl -sf "http://$ADDRESS/api/version")"
STATUS="$("$APP" --home "$HOME_DIR/home" status --json)"
echo "front door http://$ADDRESS answers /api/version: $VERSION"
echo "status through the control API: $(echo "$STATUS" | tr -d '\n' | cut -c1-160)"

kill -TERM "$PID"
wait "$PID"
RC=$?
PID=""
[ "$RC" -eq 0 ] || { echo "the built app exited with $RC"; cat "$LOG"; exit 1; }
[ ! -e "$HOME_DIR/home/runtime.json" ] || { echo "runtime.json left behind"; exit 1; }
echo "built app OK: started headless, answered, stopped cleanly on SIGTERM"
