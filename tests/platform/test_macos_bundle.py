"""The macOS bundle's Info.plist and launch agent (issue 28, item 7): the local-network and Bonjour
keys macOS 15 requires before LAN access, and the agent's log in the user's log folder."""

from __future__ import annotations

import ast
import plistlib
import sys
from pathlib import Path
from typing import Any

import pytest

from app.services.cluster.discovery import SERVICE
from app.services.platform import autostart

ROOT = Path(__file__).resolve().parents[2]


def info_plist() -> dict[str, Any]:
    """The ``info_plist=`` the spec hands PyInstaller's BUNDLE, read from its source as PyInstaller would."""
    tree = ast.parse((ROOT / "packaging" / "pairwise.spec").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "BUNDLE":
            for keyword in node.keywords:
                if keyword.arg == "info_plist":
                    value: dict[str, Any] = ast.literal_eval(keyword.value)
                    return plistlib.loads(plistlib.dumps(value))  # and it is a valid plist
    raise AssertionError("no BUNDLE(info_plist=...) in packaging/pairwise.spec")


def test_the_bundle_asks_for_the_local_network_and_names_its_bonjour_service() -> None:
    plist = info_plist()
    assert "network" in plist["NSLocalNetworkUsageDescription"]
    assert plist["NSBonjourServices"] == [SERVICE.removesuffix(".local.")]  # what discovery announces
    assert plist["LSUIElement"] is True


def test_the_packaged_launch_agent_logs_in_the_users_log_folder() -> None:
    agent = plistlib.loads((ROOT / "packaging" / "macos" / "org.pairwise.tray.plist").read_bytes())
    for key in ("StandardOutPath", "StandardErrorPath"):
        assert agent[key].endswith("/Library/Logs/Pairwise/tray.log") and not agent[key].startswith("/tmp")


def test_the_login_item_agent_logs_in_the_users_log_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setenv("HOME", str(tmp_path))
    autostart.Autostart(["/Applications/Pairwise.app/Contents/MacOS/pairwise"]).enable()
    agent = plistlib.loads((tmp_path / "Library" / "LaunchAgents" / "org.pairwise.tray.plist").read_bytes())
    log_file = tmp_path / "Library" / "Logs" / "Pairwise" / "tray.log"
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == str(log_file)
    assert log_file.parent.is_dir()  # launchd does not create it
