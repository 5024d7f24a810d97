#!/usr/bin/env bash
# mypy three times, as CI runs it: this platform, then Windows and macOS (each with its own cache,
# so reruns stay quick).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh fast
.venv/bin/mypy app
.venv/bin/mypy --platform win32 --cache-dir .mypy_cache/win32 app
.venv/bin/mypy --platform darwin --cache-dir .mypy_cache/darwin app
