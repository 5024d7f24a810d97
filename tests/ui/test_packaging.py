"""The packaging files say what they should (the PyInstaller build itself runs in packaging/build.sh)."""

from __future__ import annotations

import configparser
import plistlib
from pathlib import Path

from app.ui.resources import PNG_SIZES, TRAY_STATES, icon_path

ROOT = Path(__file__).resolve().parents[2]


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
