"""Where the tray finds its icons: the checkout's top-level ``resources/``, an installed wheel's
``<prefix>/share/pairwise/`` (its data files; the user base for ``pip install --user``), or inside a
PyInstaller bundle (``sys._MEIPASS``). Icons are SVG with PNG renderings beside them (PNG first: some tray
hosts cannot draw SVG)."""

from __future__ import annotations

import site
import sys
from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon

TRAY_STATES = ("idle", "serving", "billing", "attention")
PNG_SIZES = (16, 32, 64, 256)


def resources_dir() -> Path:
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    checkout = Path(__file__).resolve().parents[2] / "resources"
    if checkout.is_dir():
        return checkout
    for base in (sys.prefix, site.getuserbase()):
        installed = Path(base) / "share" / "pairwise"
        if installed.is_dir():
            return installed
    return checkout


def icon_path(stem: str, ext: str = "svg", size: int | None = None) -> Path:
    name = f"{stem}-{size}.{ext}" if size else f"{stem}.{ext}"
    return resources_dir() / "icons" / name


@cache
def load_icon(stem: str) -> QIcon:
    """Read once per process: the tray asks for the same few icons again and again."""
    icon = QIcon()
    for size in PNG_SIZES:
        png = icon_path(stem, "png", size)
        if png.exists():
            icon.addFile(str(png))
    svg = icon_path(stem)
    if svg.exists():
        icon.addFile(str(svg))
    return icon


def app_icon() -> QIcon:
    return load_icon("pairwise")


def tray_icon(state: str) -> QIcon:
    return load_icon(f"tray-{state if state in TRAY_STATES else 'idle'}")
