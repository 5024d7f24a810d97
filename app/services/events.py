"""A Qt-free event bus. The CLI follows it through the control API; the tray
bridges it to Qt signals. Publishing never blocks: a slow subscriber loses its
oldest events rather than stalling a request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "at": self.at, **self.data}


def notice(title: str, message: str, *, level: str = "info", **extra: Any) -> Event:
    return Event("notice", {"title": title, "message": message, "level": level, **extra})


class EventBus:
    def __init__(self, queue_size: int = 1000) -> None:
        self._queues: set[asyncio.Queue[Event]] = set()
        self._callbacks: list[Callable[[Event], None]] = []
        self._queue_size = queue_size

    def publish(self, kind: str, **data: Any) -> None:
        self.emit(Event(kind, data))

    def emit(self, event: Event) -> None:
        for callback in list(self._callbacks):
            callback(event)
        for queue in list(self._queues):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(event)

    def subscribe(self) -> asyncio.Queue[Event]:
        queue: asyncio.Queue[Event] = asyncio.Queue(self._queue_size)
        self._queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Event]) -> None:
        self._queues.discard(queue)

    def on(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback`` synchronously for every event; returns an unsubscribe function."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback)
