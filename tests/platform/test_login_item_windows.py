"""The Windows login item starts the tray through a windowed program (issue 28, item 6): started
through pip's ``pairwise.exe``, ``sys.executable`` is ``python.exe``, whose console window opened at
every login and whose closing killed the tray."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.services.platform import autostart


def _touch(*paths: Path) -> None:
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"MZ")


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delattr(sys, "frozen", raising=False)
    return monkeypatch


def test_a_venv_uses_pips_windowed_pairwise_tray(tmp_path: Path, windows: pytest.MonkeyPatch) -> None:
    scripts = tmp_path / "venv" / "Scripts"
    _touch(scripts / "python.exe", scripts / "pythonw.exe", scripts / "pairwise.exe", scripts / "pairwise-tray.exe")
    windows.setattr(sys, "executable", str(scripts / "python.exe"))
    assert autostart.tray_command(Path("C:/h")) == [str(scripts / "pairwise-tray.exe"), "--home", str(Path("C:/h"))]


def test_a_plain_install_finds_the_windowed_script_in_its_scripts_folder(tmp_path: Path,
                                                                          windows: pytest.MonkeyPatch) -> None:
    _touch(tmp_path / "python.exe", tmp_path / "pythonw.exe", tmp_path / "Scripts" / "pairwise-tray.exe")
    windows.setattr(sys, "executable", str(tmp_path / "python.exe"))
    assert autostart.tray_command() == [str(tmp_path / "Scripts" / "pairwise-tray.exe")]


def test_without_the_script_pythonw_runs_the_app(tmp_path: Path, windows: pytest.MonkeyPatch) -> None:
    _touch(tmp_path / "python.exe", tmp_path / "pythonw.exe")
    windows.setattr(sys, "executable", str(tmp_path / "python.exe"))
    assert autostart.tray_command() == [str(tmp_path / "pythonw.exe"), "-m", "app"]


def test_the_wheel_declares_the_windowed_script() -> None:
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["gui-scripts"]["pairwise-tray"] == project["project"]["scripts"]["pairwise"]
