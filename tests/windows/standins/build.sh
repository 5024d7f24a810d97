#!/usr/bin/env bash
# Build the stand-ins for Wine 8's gaps into the embeddable Python's folder ($1), where the Windows
# loader looks first for the DLLs of python.exe and its extension modules.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DEST="$1"
CC=x86_64-w64-mingw32-gcc
$CC -O2 -shared -o "$DEST/bcryptprimitives.dll" "$HERE/bcryptprimitives.c" -ladvapi32
$CC -O2 -shared -o "$DEST/icuuc.dll" "$HERE/icuuc.c"
# CPython's _wmi asks WMI (Win32_OperatingSystem) for platform.win32_ver(); Wine 8's WMI answers it
# with nothing useful and can hang. Moved aside, platform falls back to the version API, as it does
# on any Windows where _wmi is missing. Real Windows answers WMI: nothing to move there.
if [ -f "$DEST/_wmi.pyd" ]; then mv "$DEST/_wmi.pyd" "$DEST/_wmi.pyd.aside"; fi
