#!/usr/bin/env bash
# Install the desktop entry, the icon and (with --autostart) the login item for the current user.
# Expects `pairwise` on PATH (pip install, or a link to dist/pairwise/pairwise).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
CONFIG="${XDG_CONFIG_HOME:-$HOME/.config}"
install -Dm644 "$HERE/pairwise.desktop" "$DATA/applications/pairwise.desktop"
install -Dm644 "$ROOT/resources/icons/pairwise.svg" "$DATA/icons/hicolor/scalable/apps/pairwise.svg"
for size in 16 32 64 256; do
    install -Dm644 "$ROOT/resources/icons/pairwise-$size.png" "$DATA/icons/hicolor/${size}x${size}/apps/pairwise.png"
done
if [ "${1:-}" = "--autostart" ]; then
    install -Dm644 "$HERE/pairwise-autostart.desktop" "$CONFIG/autostart/pairwise.desktop"
    echo "Pairwise will start in the tray when you log in."
fi
echo "Installed the Pairwise desktop entry."
