"""The installed Qt binding keeps its references (PySide6 6.12.0 under Python 3.11 does not)."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QLabel

from app.ui.qtcompat import binding_problem


def test_installed_binding_is_safe() -> None:
    assert binding_problem() is None


def test_many_calls_keep_none_alive(qapp: object) -> None:
    label = QLabel()
    before = sys.getrefcount(None)
    for _ in range(2000):
        label.setText("x")
    assert sys.getrefcount(None) >= before - 10
