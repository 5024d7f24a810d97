"""The copies of a model a batch runs on, how much of each it may take, and how fast each goes.

A batch is below interactive requests: on each copy it keeps ``share`` requests at most and takes
a free slot only while the copy's requests in flight (its own and everyone else's) leave
``headroom`` slots free, so a request from an app always finds a place on the copy (or, when the
apps fill that too, the batch waits until they are done). Rates are measured as lines finish,
over the last ``WINDOW_S`` seconds.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from app.services.backends.base import Upstream
from app.services.batch.shapes import CopyRow

WINDOW_S = 30.0


def headroom(upstream: Upstream) -> int:
    """Slots a batch leaves for interactive requests: a quarter of the capacity, at least one
    (none only where the copy holds one request at a time: then the batch waits its turn)."""
    return 0 if upstream.capacity <= 1 else max(1, upstream.capacity // 4)


def share(upstream: Upstream) -> int:
    """Requests of a batch a copy may hold at once."""
    return max(1, upstream.capacity - headroom(upstream))


def has_room(upstream: Upstream) -> bool:
    return upstream.in_flight < share(upstream)


@dataclass
class CopyRate:
    label: str
    kind: str
    done: int = 0
    finished: deque[tuple[float, int]] = field(default_factory=deque)  # (when, tokens) within the window
    started_at: float = field(default_factory=time.monotonic)

    def finish(self, tokens: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.done += 1
        self.finished.append((now, tokens))
        while self.finished and self.finished[0][0] < now - WINDOW_S:
            self.finished.popleft()

    def rates(self, now: float | None = None) -> tuple[float, float]:
        """(lines/s, tokens/s) over the window (from the copy's first line while it is younger)."""
        now = time.monotonic() if now is None else now
        recent = [(t, n) for t, n in self.finished if t >= now - WINDOW_S]
        span = max(min(WINDOW_S, now - self.started_at), 1e-3)
        return len(recent) / span, sum(n for _, n in recent) / span

    def row(self, in_flight: int) -> CopyRow:
        lines, tokens = self.rates()
        return {"copy": self.label, "kind": self.kind, "done": self.done, "lines_per_s": round(lines, 3),
                "tokens_per_s": round(tokens, 1), "in_flight": in_flight}
