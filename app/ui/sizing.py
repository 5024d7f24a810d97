"""Window sizes from the screen and the font, clamped, so a window fits at any scale factor:
``width_chars`` × ``height_lines`` of the current font, never more than 90% of the screen's
available area and never less than what its content asks for."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

SCREEN_SHARE = 0.9


def fit_to_screen(widget: QWidget, *, width_chars: int, height_lines: int) -> None:
    metrics = widget.fontMetrics()
    want_w = metrics.averageCharWidth() * width_chars
    want_h = metrics.lineSpacing() * height_lines
    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is not None:
        area = screen.availableGeometry()
        want_w = min(want_w, int(area.width() * SCREEN_SHARE))
        want_h = min(want_h, int(area.height() * SCREEN_SHARE))
    widget.resize(max(want_w, widget.minimumSizeHint().width()), max(want_h, 200))
