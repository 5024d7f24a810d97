"""Where things live by default on each OS (platformdirs and each desktop's convention)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "pairwise"


def default_home() -> Path:
    """Linux ``~/.local/share/pairwise``, macOS ``~/Library/Application Support/pairwise``,
    Windows ``%LOCALAPPDATA%\\pairwise`` (local, not roaming: state.db and keys stay on this machine)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False, roaming=False))


def xdg_autostart_dir() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "autostart"


def launch_agents_dir() -> Path:
    return Path.home() / "Library" / "LaunchAgents"


def macos_log_dir() -> Path:
    """``~/Library/Logs/Pairwise``: where Console.app shows a user's app logs (never /tmp, which is
    shared, cleared at boot and readable by other users)."""
    return Path.home() / "Library" / "Logs" / "Pairwise"
