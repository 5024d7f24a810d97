"""Settings' "Start Pairwise when I log in": nothing is written until it is turned on; off removes it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.services.platform.autostart import Autostart
from app.ui.views.login_item import LoginItemBox, autostart_for


def test_login_item_switch_writes_and_removes_the_xdg_entry(qtbot: QtBot, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    entry = tmp_path / "config" / "autostart" / "pairwise.desktop"
    box = LoginItemBox(autostart_for(tmp_path / "home"))
    qtbot.addWidget(box)
    assert not box.check.isChecked() and not entry.exists()  # off until the user turns it on
    box.check.setChecked(True)
    text = entry.read_text()
    assert f"--home {tmp_path / 'home'}" in text and "-m app" in text
    assert "Login item added" in box.note.text()
    box.check.setChecked(False)
    assert not entry.exists() and "removed" in box.note.text()


def test_login_item_failure_is_said_and_the_switch_stays_off(qtbot: QtBot, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    blocker = tmp_path / "config"
    blocker.write_text("a file where the config directory should be")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    box = LoginItemBox(Autostart(["pairwise"]))
    qtbot.addWidget(box)
    box.check.setChecked(True)
    assert not box.check.isChecked()
    assert "Could not add the login item" in box.note.text()
