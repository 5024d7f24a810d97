"""Colours that follow the desktop's palette, so they stay readable on light and dark themes."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

AMBER_ON_LIGHT = QColor("#8a4f00")
AMBER_ON_DARK = QColor("#ffb74d")


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


def off_lan_colour(palette: QPalette) -> QColor:
    """The off-LAN amber, dark on a light background and light on a dark one."""
    return AMBER_ON_DARK if is_dark(palette) else AMBER_ON_LIGHT
