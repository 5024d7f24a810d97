"""The clock billing and idle timers use: it keeps counting while the machine sleeps.

Which source that is on each OS, and why, is in ``app.services.platform.clock``.
"""

from app.services.platform.clock import awake_clock

__all__ = ["awake_clock"]
