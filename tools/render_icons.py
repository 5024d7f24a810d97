"""Render resources/icons/*.svg to PNGs at 16, 32, 64 and 256 px (run after editing an SVG).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/render_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIZES = (16, 32, 64, 256)


def render(svg: Path) -> list[Path]:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg} is not a valid SVG")
    written = []
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        out = svg.with_name(f"{svg.stem}-{size}.png")
        image.save(str(out))
        written.append(out)
    return written


def main() -> int:
    QGuiApplication(sys.argv)
    for svg in sorted((ROOT / "resources" / "icons").glob("*.svg")):
        for out in render(svg):
            print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
