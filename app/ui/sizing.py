"""Window sizes from the screen and the font, clamped, so a window fits at any scale factor:
``width_chars`` × ``height_lines`` of the current font, never more than 90% of the screen's
available area and never less than what its content asks for."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QLayout, QScrollArea, QVBoxLayout, QWidget

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


L = TypeVar("L", bound=QLayout)


def scrolling(widget: QWidget, make: Callable[[QWidget], L]) -> L:
    """Give ``widget`` a scroll area filling it and return the layout of what scrolls: a page or dialog
    taller (or wider) than the screen scrolls inside it instead of growing past the screen, so the
    buttons outside it stay in reach and wrapped text is never cut off."""
    outer = QVBoxLayout(widget)
    outer.setContentsMargins(0, 0, 0, 0)
    scroll = QScrollArea(widget)
    scroll.setObjectName("scrolling")
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    content = QWidget()
    content.setObjectName("scrollingContent")
    layout = make(content)
    scroll.setWidget(content)
    outer.addWidget(scroll)
    return layout


def grow_to_fit(window: QWidget, scroller: QScrollArea | None = None) -> None:
    """A window whose text just grew (an error in a dialog) takes the height it now needs at its width,
    within the screen's available area (beyond it, its scroll area ``scroller`` scrolls: a scroll area
    does not pass on how tall its content wants to be, so that is asked of the content itself)."""
    layout = window.layout()
    if layout is None:
        return
    width = window.width()
    need = layout.totalHeightForWidth(width) if layout.hasHeightForWidth() else layout.totalSizeHint().height()
    content = scroller.widget() if scroller is not None else None
    inner = content.layout() if content is not None else None
    if scroller is not None and inner is not None:
        viewport = scroller.viewport()
        wants = inner.totalHeightForWidth(viewport.width()) if inner.hasHeightForWidth() \
            else inner.totalSizeHint().height()
        need = max(need, window.height() - viewport.height() + wants)
    screen = window.screen() or QGuiApplication.primaryScreen()
    limit = screen.availableGeometry().height() if screen is not None else need
    if need > window.height():
        window.resize(width, min(need, int(limit * SCREEN_SHARE)))


def screen_width(widget: QWidget) -> int:
    """Most of the available width of the screen ``widget`` is on (a minimum width never exceeds it)."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return int(screen.availableGeometry().width() * SCREEN_SHARE) if screen is not None else 10_000
