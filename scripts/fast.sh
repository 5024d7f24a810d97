#!/usr/bin/env bash
# The fast lane: every test that starts no process, no simulated Hugging Face, no Qt, no keyring and
# no llama.cpp (tests/support/lanes.py marks the rest `slow`). It needs no apt package, no D-Bus
# session and no llama.cpp build. Extra arguments go to pytest: `scripts/fast.sh tests/unit -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh fast
export QT_QPA_PLATFORM=offscreen PAIRWISE_MDNS=off
# Only the plugins the suite uses, whatever else the venv holds (one may take seconds to import).
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# Compiled test modules are kept between runs (a machine that sets PYTHONDONTWRITEBYTECODE would
# rewrite and compile every test module on every run: a third of collecting).
unset PYTHONDONTWRITEBYTECODE
# The whole lane in two processes (a third of its time is tests waiting on real timers, which
# overlap); a test or file named on the command line in one, where a second worker would only
# collect again.
workers=()
[ $# -eq 0 ] && workers=(-n 2)
exec .venv/bin/pytest -q -p no:cacheprovider -p pytest_asyncio.plugin -p pytest_timeout -p xdist.plugin \
  ${workers[@]+"${workers[@]}"} -m "not slow" "$@"
