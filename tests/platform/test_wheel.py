"""A plain ``pip install`` of the built wheel gives a tray with its icon (issue 28, item 4): the
wheel carries ``resources/icons`` as data files (``<prefix>/share/pairwise/icons``), and the installed
app finds them there."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from app.harness import REPO

CHECK = """
import sys
from PySide6.QtGui import QGuiApplication
import app
from app.ui.resources import app_icon, icon_path, tray_icon
assert app.__file__.startswith(sys.prefix), app.__file__  # the installed copy, not the checkout
qt = QGuiApplication([])
assert icon_path("pairwise", "png", 32).is_file(), icon_path("pairwise", "png", 32)
assert not app_icon().isNull() and not tray_icon("billing").isNull()
print("icon", icon_path("pairwise", "png", 32))
"""


def test_the_built_wheel_installed_in_a_fresh_venv_finds_the_icon(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(REPO)], check=True, cwd=tmp_path, timeout=240)
    (wheel,) = (tmp_path / "dist").glob("pairwise-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = "pairwise-0.1.0.data/data/share/pairwise/icons/"
    assert f"{data}pairwise-32.png" in names and f"{data}pairwise.ico" in names, names

    # Nothing of the checkout on the path: with it, pip would see the checkout's egg-info and call
    # the wheel already installed.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=240, env=env)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, timeout=240, env=env, cwd=tmp_path)
    # The dependencies come from this interpreter's site-packages, after the venv's own (a .pth is
    # read after the venv's site-packages is on the path): only Pairwise itself is the wheel's.
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, encoding="utf-8", check=True).stdout.strip())
    (purelib / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    env["QT_QPA_PLATFORM"] = "offscreen"
    result = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True, encoding="utf-8",
                            cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert str(venv) in result.stdout
