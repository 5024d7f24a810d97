"""No value changes without the user meaning it: a spin box or combo box takes the mouse wheel only
while it has the keyboard focus. A wheel turned over an unfocused field scrolls the pane it sits in
instead (a pointer passing over "Daily budget" while scrolling the node detail used to turn it down
to "no cap"). One application-wide event filter, so every field of every window is covered, the
ones a later change adds included.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QWidget

_installed: list[WheelGuard] = []


def _guarded(obj: QObject) -> QWidget | None:
    """The spin box or combo box ``obj`` is, or is inside (a spin box's own line edit), else None."""
    widget = obj if isinstance(obj, QWidget) else None
    while widget is not None:
        if isinstance(widget, (QAbstractSpinBox, QComboBox)):
            return widget
        if widget.isWindow():
            return None
        widget = widget.parentWidget()
    return None


class WheelGuard(QObject):
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.Wheel:
            return False
        field = _guarded(obj)
        if field is None or field.hasFocus():
            return False
        if field.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            field.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel never gives it focus either
        # Hand the turn to what holds the field (a scroll area scrolls); the field itself never sees it.
        parent = field.parentWidget()
        if parent is not None:
            QCoreApplication.sendEvent(parent, event)
        return True


def install() -> None:
    """Guard every field of this application (idempotent)."""
    app = QApplication.instance()
    if app is None or _installed:
        return
    guard = WheelGuard(app)
    app.installEventFilter(guard)
    _installed.append(guard)
