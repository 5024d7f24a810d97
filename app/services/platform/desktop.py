"""Can this machine show a window at all?"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def has_display(env: Mapping[str, str] | None = None) -> bool:
    """Linux needs X11 or Wayland, unless a Qt platform is forced (QT_QPA_PLATFORM=offscreen for
    tests and screenshots); macOS and Windows always have a desktop session when a user runs us."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM"))
