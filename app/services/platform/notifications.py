"""Can this app's desktop notifications reach the user?

macOS shows an app's notifications only once the user has allowed them (the Notification Center's
permission, asked through ``UNUserNotificationCenter``); until then, and after a refusal, a tray
message (``QSystemTrayIcon.showMessage``) is dropped without a word. Windows and Linux show tray
messages without asking. So the tray asks at the moment it matters (the first rented GPU) and,
where the answer is not "allowed", also shows money notices in a window of its own.

The OS calls are ``_macos_status`` and ``_macos_request`` (PyObjC's ``UserNotifications``, present
in the packaged app; a Python without it, or not running from an app bundle, cannot ask and says
"unknown"). Tests fake them and ``current_platform``, as the rest of this package is faked.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, Literal

log = logging.getLogger(__name__)

Permission = Literal["allowed", "denied", "not_asked", "unknown"]
ANSWER_WAIT_S = 2.0  # the status comes back on another thread; never hold the tray longer than this
# UNAuthorizationStatus: notDetermined 0, denied 1, authorized 2, provisional 3, ephemeral 4
_STATUS: dict[int, Permission] = {0: "not_asked", 1: "denied", 2: "allowed", 3: "allowed", 4: "allowed"}
_ALERT_AND_SOUND = (1 << 2) | (1 << 1)  # UNAuthorizationOptionAlert | UNAuthorizationOptionSound


def current_platform() -> str:
    return sys.platform


def needs_permission() -> bool:
    """Does this OS drop an app's notifications until the user allows them?"""
    return current_platform() == "darwin"


def permission() -> Permission:
    """Whether notifications from this app are shown, as the OS says now."""
    if not needs_permission():
        return "allowed"
    try:
        return _macos_status()
    except Exception as exc:  # an OS call that fails is an answer we do not have, not a crash in the tray
        log.info("cannot read the notification permission: %s", exc)
        return "unknown"


def request() -> Permission:
    """Ask the user (macOS shows its prompt once; later calls return the earlier answer)."""
    if not needs_permission():
        return "allowed"
    try:
        return _macos_request()
    except Exception as exc:
        log.info("cannot ask for the notification permission: %s", exc)
        return "unknown"


def _center() -> Any:
    from Foundation import NSBundle  # type: ignore[import-not-found]  # PyObjC: macOS only
    from UserNotifications import UNUserNotificationCenter  # type: ignore[import-not-found]

    if NSBundle.mainBundle().bundleIdentifier() is None:
        raise RuntimeError("not running from an app bundle (macOS asks only bundled apps)")
    return UNUserNotificationCenter.currentNotificationCenter()


def _wait(start: Any) -> Any:
    """Run an OS call that answers through a completion handler; its answer, or None after the wait."""
    answered = threading.Event()
    box: list[Any] = []

    def done(*values: Any) -> None:
        box.append(values)
        answered.set()

    start(done)
    return box[0] if answered.wait(ANSWER_WAIT_S) and box else None


def _ask_center(call: Callable[[Any, Callable[..., None]], None]) -> tuple[Any, ...] | None:
    """One Notification Center call answered through its completion handler: the answer's values, or
    None when this Python cannot ask (no PyObjC, no bundle) or no answer came in time."""
    try:
        center = _center()
    except (ImportError, RuntimeError) as exc:
        log.info("cannot ask the Notification Center: %s", exc)
        return None
    values = _wait(lambda done: call(center, done))
    return tuple(values) if values else None


def _macos_status() -> Permission:
    values = _ask_center(lambda center, done: center.getNotificationSettingsWithCompletionHandler_(done))
    return "unknown" if not values else _STATUS.get(int(values[0].authorizationStatus()), "unknown")


def _macos_request() -> Permission:
    values = _ask_center(lambda center, done: center.requestAuthorizationWithOptions_completionHandler_(
        _ALERT_AND_SOUND, done))
    return "unknown" if not values else ("allowed" if values[0] else "denied")
