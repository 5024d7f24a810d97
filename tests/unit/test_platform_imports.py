"""Every module of ``app`` imports on Windows and macOS: no import-time dependency on Linux.

Each run is a fresh interpreter that first loads the third-party and standard-library modules
``app`` needs with the real platform (asyncio, Qt and the rest choose their own platform modules
at import, and are not ours to test), then makes ``fcntl``, ``termios`` and ``resource`` (and the
Windows-only modules) unimportable, sets ``sys.platform``, and imports every module of ``app``
afresh (on the fake Windows ``uvloop`` too, which has no Windows build). An ``import fcntl`` at module level, or a platform check at import that reaches for
something the faked OS lacks, fails the test with the module's name and the error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import importlib, json, pkgutil, sys

import app

names = sorted(m.name for m in pkgutil.walk_packages(app.__path__, "app.") if ".__main__" not in m.name)
# First with the real platform: whatever app pulls in from outside app is loaded now.
for name in names:
    importlib.import_module(name)
for name in [n for n in sys.modules if n == "app" or n.startswith("app.")]:
    del sys.modules[name]

BLOCKED = set(sys.argv[2].split(","))
for name in BLOCKED:
    sys.modules.pop(name, None)

class Blocker:
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked: not on this platform)", name=fullname)
        return None

sys.meta_path.insert(0, Blocker())
sys.platform = sys.argv[1]
failures = {}
imported = 0
for name in names:
    try:
        importlib.import_module(name)
        imported += 1
    except Exception as exc:
        failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"platform": sys.platform, "imported": imported, "total": len(names), "failures": failures}))
"""

POSIX_ONLY = ["fcntl", "termios", "resource"]
NOT_ON_WINDOWS = ["uvloop"]  # no Windows wheels: imported only where it exists
WINDOWS_ONLY = ["msvcrt", "winreg", "_winapi", "winsound"]


@pytest.mark.parametrize(("fake_platform", "blocked"), [
    ("win32", POSIX_ONLY + NOT_ON_WINDOWS),
    ("darwin", POSIX_ONLY + WINDOWS_ONLY),
])
def test_every_app_module_imports_on_the_other_platforms(fake_platform: str, blocked: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", PROBE, fake_platform, ",".join(blocked)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["failures"] == {}, report["failures"]
    assert report["platform"] == fake_platform
    assert report["imported"] == report["total"] > 100


def test_the_probe_catches_a_module_level_fcntl(tmp_path: Path) -> None:
    """The blocker is real: a package with ``import fcntl`` at module level fails under the fake Windows."""
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "posix_only.py").write_text("import fcntl\n")
    (pkg / "portable.py").write_text("import sys\nWINDOWS = sys.platform == 'win32'\n")
    done = subprocess.run([sys.executable, "-c", PROBE, "win32", ",".join(POSIX_ONLY)], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True,
                          timeout=60)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert list(report["failures"]) == ["app.posix_only"]
    assert "fcntl" in report["failures"]["app.posix_only"]
    assert report["imported"] == 1
