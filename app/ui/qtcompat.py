"""Is this Qt binding safe to run? PySide6-Essentials 6.12.0 on Python 3.11 is not.

Its abi3 wheels treat ``None``, ``True`` and ``False`` as immortal (as they are from Python 3.12
on): every void method (``setText``, ``setData``...) returns ``None`` without a new reference, and
``Signal.emit`` returns ``True`` the same way. On 3.11 each such call takes a reference away, and
after some tens of thousands of calls (an hour of a tray app refreshing its views) the interpreter
aborts with "none_dealloc" or "bool_dealloc". pyproject.toml pins PySide6-Essentials below 6.12;
``binding_problem()`` finds such a binding at start-up so the app refuses to run with a clear
message instead of dying later at random.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import QObject, Signal

CALLS = 16


class _Probe(QObject):
    fired = Signal()


def binding_problem() -> str | None:
    """None when the binding keeps references right; else what is wrong and what to do."""
    if sys.version_info >= (3, 12):
        return None  # None and the bools are immortal there: a missing reference cannot hurt
    probe = _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(CALLS):
        probe.setObjectName("probe")
        probe.fired.emit()
    lost = []
    for name, obj, before in (("None", None, none_before), ("True", True, true_before)):
        missing = before - sys.getrefcount(obj)
        if missing >= CALLS // 2:
            lost.append(name)
            _give_back(obj, missing)  # what the probe itself took, so the refusal exits cleanly
    if not lost:
        return None
    return (f"PySide6 {PYSIDE_VERSION} loses a reference to {' and '.join(lost)} on every call under Python "
            f"{sys.version_info.major}.{sys.version_info.minor}; the app would crash after a while. "
            "Install a PySide6-Essentials older than 6.12 (pip install 'PySide6-Essentials<6.12') "
            "or use Python 3.12 or newer.")


def _give_back(obj: Any, count: int) -> None:
    incref = ctypes.pythonapi.Py_IncRef
    incref.argtypes = [ctypes.py_object]
    incref.restype = None
    for _ in range(count):
        incref(obj)
