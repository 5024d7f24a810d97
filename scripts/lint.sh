#!/usr/bin/env bash
# ruff over everything CI lints (the same line as scripts/test.sh runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh fast
exec .venv/bin/ruff check app tests bench "$@"
