#!/usr/bin/env bash
# The README's run command: sets up .venv on first use, then starts Pairwise.
# With no arguments it opens the tray app; `scripts/run.sh serve` runs a headless node.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh app
exec .venv/bin/pairwise "$@"
