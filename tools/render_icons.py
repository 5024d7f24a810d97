"""Render resources/icons/*.svg to PNGs at 16, 32, 64 and 256 px, and the app icon for Windows
(``pairwise.ico``) and macOS (``pairwise.icns``); run after editing an SVG:

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/render_icons.py

Both icon formats are a small header and a table of PNG images (Windows Vista and later read PNG
entries in .ico; macOS 10.7 and later read PNG entries in .icns), packed here by hand, so neither
Pillow nor the build needs anything more than what is committed in resources/icons/.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIZES = (16, 32, 64, 256)
APP_ICON = "pairwise"
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# (OSType, pixel size): the PNG-bearing types, 1x and 2x.
ICNS_TYPES = (("icp4", 16), ("icp5", 32), ("icp6", 64), ("ic07", 128), ("ic08", 256), ("ic09", 512),
              ("ic10", 1024), ("ic11", 32), ("ic12", 64), ("ic13", 256), ("ic14", 512))


def renderer_for(svg: Path) -> QSvgRenderer:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg} is not a valid SVG")
    return renderer


def image(renderer: QSvgRenderer, size: int) -> QImage:
    out = QImage(size, size, QImage.Format.Format_ARGB32)
    out.fill(Qt.GlobalColor.transparent)
    painter = QPainter(out)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return out


def png_bytes(picture: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    picture.save(buffer, "PNG")
    return bytes(data.data())


def render(svg: Path) -> list[Path]:
    renderer = renderer_for(svg)
    written = []
    for size in SIZES:
        out = svg.with_name(f"{svg.stem}-{size}.png")
        image(renderer, size).save(str(out))
        written.append(out)
    return written


def pack_ico(pngs: dict[int, bytes]) -> bytes:
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))  # reserved, type 1 = icon, count
    offset = 6 + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        blob = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
        blobs += blob
    return header + entries + blobs


def pack_icns(pngs: dict[int, bytes]) -> bytes:
    body = b""
    for ostype, size in ICNS_TYPES:
        blob = pngs[size]
        body += ostype.encode("ascii") + struct.pack(">I", 8 + len(blob)) + blob
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def render_app_icons(svg: Path) -> list[Path]:
    renderer = renderer_for(svg)
    sizes = set(ICO_SIZES) | {size for _, size in ICNS_TYPES}
    pngs = {size: png_bytes(image(renderer, size)) for size in sorted(sizes)}
    ico, icns = svg.with_suffix(".ico"), svg.with_suffix(".icns")
    ico.write_bytes(pack_ico({s: pngs[s] for s in ICO_SIZES}))
    icns.write_bytes(pack_icns(pngs))
    return [ico, icns]


def main() -> int:
    QGuiApplication(sys.argv)
    for svg in sorted((ROOT / "resources" / "icons").glob("*.svg")):
        outputs = render(svg) + (render_app_icons(svg) if svg.stem == APP_ICON else [])
        for out in outputs:
            print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
