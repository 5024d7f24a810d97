"""Colours that follow the desktop's palette, so they stay readable on light and dark themes.

Every colour of our own is checked against the background it is drawn on with the WCAG contrast
ratio (``contrast``): 4.5:1 at least, the level for body text (tests/ui/test_fits.py checks it in a
light and a dark palette)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

AMBER_ON_LIGHT = QColor("#8a4f00")
AMBER_ON_DARK = QColor("#ffb74d")
READABLE = 4.5  # WCAG AA for body text
MUTED_SHARE = 0.7  # a secondary line: this much of the text colour, the rest of the background


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


def off_lan_colour(palette: QPalette) -> QColor:
    """The off-LAN amber, dark on a light background and light on a dark one."""
    return AMBER_ON_DARK if is_dark(palette) else AMBER_ON_LIGHT


def _luminance(colour: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())


def contrast(one: QColor, other: QColor) -> float:
    """The WCAG contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    a, b = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def muted(palette: QPalette) -> QColor:
    """Secondary text (an explanation under a choice): softer than the text, still readable on the
    window's background. ``palette(mid)`` is not: it is a bevel colour, nearly invisible on dark themes."""
    text = palette.color(QPalette.ColorRole.WindowText)
    back = palette.color(QPalette.ColorRole.Window)
    share = MUTED_SHARE
    while share < 1.0:
        mixed = QColor.fromRgbF(*(t * share + b * (1 - share) for t, b in
                                  zip((text.redF(), text.greenF(), text.blueF()),
                                      (back.redF(), back.greenF(), back.blueF()), strict=True)))
        if contrast(mixed, back) >= READABLE:
            return mixed
        share += 0.1
    return text
