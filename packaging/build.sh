#!/usr/bin/env bash
# Build the one-folder app with PyInstaller, in a venv of its own (PyInstaller never enters the
# project's environment), then check that the built app starts headless (`serve`) and answers.
#
#   packaging/build.sh            -> dist/pairwise/pairwise
#   BUILD_DIR=/tmp/b packaging/build.sh
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build/pyinstaller}"
VENV="$BUILD_DIR/venv"
PYTHON="${PYTHON:-python3}"

mkdir -p "$BUILD_DIR"
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "$ROOT" "pyinstaller>=6.6"

cd "$ROOT"
"$VENV/bin/pyinstaller" --noconfirm --clean --workpath "$BUILD_DIR/work" --distpath "$ROOT/dist" \
    packaging/pairwise.spec

"$ROOT/packaging/check_build.sh" "$ROOT/dist/pairwise/pairwise"
