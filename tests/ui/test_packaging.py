"""The packaging files say what they should (the PyInstaller build itself runs in packaging/build.sh)."""

from __future__ import annotations

import configparser
import importlib.util
import plistlib
import struct
from pathlib import Path

import yaml

from app.ui.resources import PNG_SIZES, TRAY_STATES, icon_path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("render_icons", ROOT / "tools" / "render_icons.py")
assert _spec is not None and _spec.loader is not None
make_icons = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_icons)


def desktop(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path)
    return parser["Desktop Entry"]


def test_linux_entries_start_the_tray() -> None:
    entry = desktop(ROOT / "packaging" / "linux" / "pairwise.desktop")
    assert (entry["Type"], entry["Exec"], entry["Icon"], entry["Terminal"]) == ("Application", "pairwise", "pairwise",
                                                                               "false")
    autostart = desktop(ROOT / "packaging" / "linux" / "pairwise-autostart.desktop")
    assert autostart["Exec"] == "pairwise" and autostart["X-GNOME-Autostart-enabled"] == "true"


def test_macos_launch_agent_runs_at_login_without_keepalive() -> None:
    with open(ROOT / "packaging" / "macos" / "org.pairwise.tray.plist", "rb") as fh:
        agent = plistlib.load(fh)
    assert agent["Label"] == "org.pairwise.tray" and agent["RunAtLoad"] is True and agent["KeepAlive"] is False
    assert agent["ProgramArguments"][0].endswith("Pairwise.app/Contents/MacOS/pairwise")


def test_spec_builds_one_folder_with_resources() -> None:
    spec = (ROOT / "packaging" / "pairwise.spec").read_text()
    assert "COLLECT(" in spec and "exclude_binaries=True" in spec  # one-folder
    assert '"resources"' in spec and 'collect_submodules("app")' in spec


def test_every_icon_exists_as_svg_and_png() -> None:
    for stem in ["pairwise", *(f"tray-{s}" for s in TRAY_STATES)]:
        assert icon_path(stem).read_text().startswith("<svg")
        for size in PNG_SIZES:
            assert icon_path(stem, "png", size).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- Windows and macOS (issue 16) -------------------------------------------------------------------------


def png_size(blob: bytes) -> tuple[int, int]:
    assert blob[:8] == b"\x89PNG\r\n\x1a\n" and blob[12:16] == b"IHDR"
    return struct.unpack(">II", blob[16:24])


def ico_images(data: bytes) -> dict[int, bytes]:
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    images = {}
    for i in range(count):
        width, height, _colors, _r, _planes, _bpp, size, offset = struct.unpack("<BBBBHHII", data[6 + 16 * i:22 + 16 * i])
        blob = data[offset:offset + size]
        assert png_size(blob) == ((width or 256), (height or 256))
        images[width or 256] = blob
    return images


def icns_images(data: bytes) -> dict[str, bytes]:
    assert data[:4] == b"icns" and struct.unpack(">I", data[4:8])[0] == len(data)
    images, at = {}, 8
    while at < len(data):
        ostype, length = data[at:at + 4].decode(), struct.unpack(">I", data[at + 4:at + 8])[0]
        images[ostype] = data[at + 8:at + length]
        at += length
    return images


def test_windows_ico_and_macos_icns_are_committed() -> None:
    ico = ico_images(icon_path("pairwise", "ico").read_bytes())
    assert sorted(ico) == [16, 24, 32, 48, 64, 128, 256]
    icns = icns_images(icon_path("pairwise", "icns").read_bytes())
    expected = dict(make_icons.ICNS_TYPES)
    assert set(icns) == set(expected)
    for ostype, blob in icns.items():
        assert png_size(blob) == (expected[ostype], expected[ostype])


def test_icon_packers_round_trip() -> None:
    pngs = {size: b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", size, size) + b"x" * 9
            for size in {s for _, s in make_icons.ICNS_TYPES} | set(make_icons.ICO_SIZES)}
    assert ico_images(make_icons.pack_ico({s: pngs[s] for s in make_icons.ICO_SIZES})) == {
        s: pngs[s] for s in make_icons.ICO_SIZES}
    assert icns_images(make_icons.pack_icns(pngs)) == {t: pngs[s] for t, s in make_icons.ICNS_TYPES}


def test_spec_builds_for_all_three_desktops() -> None:
    spec = (ROOT / "packaging" / "pairwise.spec").read_text()
    assert '"LSUIElement": True' in spec and "BUNDLE(" in spec and '"pairwise.icns"' in spec  # macOS: menu bar only
    assert 'executable("pairwise-tray", False, icons / "pairwise.ico")' in spec  # Windows: tray without a console
    assert 'executable("pairwise", True, icons / "pairwise.ico")' in spec  # and the console command
    assert (ROOT / "packaging" / "build.ps1").read_text().count("pairwise.spec") == 1


def test_ci_workflow_covers_three_hosted_runners() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "platforms.yml").read_text())
    for job in ("check", "bundle"):
        assert workflow["jobs"][job]["strategy"]["matrix"]["os"] == ["ubuntu-latest", "macos-latest", "windows-latest"]
    steps = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["check"]["steps"])
    assert "mypy --platform win32" in steps and "mypy --platform darwin" in steps and "ruff check" in steps
    builds = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["bundle"]["steps"])
    assert "packaging/build.sh" in builds and "./packaging/build.ps1" in builds
