"""Recent Responses conversations, for ``previous_response_id``: in memory only, never on disk
(prompts are never written), bounded in count and age; an id it cannot answer for is named."""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable

from app.services.json_types import JsonArray
from app.services.translate.refusal import Unsupported

MAX_RESPONSES = 256
MAX_AGE_S = 3600.0


class ResponseStore:
    def __init__(self, max_count: int = MAX_RESPONSES, max_age_s: float = MAX_AGE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_count, self.max_age_s, self._clock = max_count, max_age_s, clock
        self._kept: OrderedDict[str, tuple[float, JsonArray]] = OrderedDict()
        self._gone: deque[str] = deque(maxlen=4 * max_count)  # ids let go, to say "expired" rather than "unknown"

    def __len__(self) -> int:
        self._expire()
        return len(self._kept)

    def keep(self, response_id: str, conversation: JsonArray) -> None:
        self._kept[response_id] = (self._clock(), conversation)
        self._expire()
        while len(self._kept) > self.max_count:
            self._gone.append(self._kept.popitem(last=False)[0])

    def conversation(self, response_id: str) -> JsonArray:
        """The messages up to and including that response's answer, or Unsupported naming the id."""
        self._expire()
        kept = self._kept.get(response_id)
        if kept is not None:
            return list(kept[1])
        minutes = int(self.max_age_s // 60)
        if response_id in self._gone:
            why = (f"response {response_id!r} has expired: this node keeps the last {self.max_count} responses "
                   f"for {minutes} minutes, in memory only; send the whole conversation as input")
        else:
            why = (f"response {response_id!r} is unknown here (it was made with store false, by another node, "
                   "or before this node restarted: responses are kept in memory only); send the whole "
                   "conversation as input")
        raise Unsupported("previous_response_id", "the Responses API", why)

    def _expire(self) -> None:
        cutoff = self._clock() - self.max_age_s
        while self._kept:
            oldest, (at, _) = next(iter(self._kept.items()))
            if at >= cutoff:
                break
            self._kept.popitem(last=False)
            self._gone.append(oldest)
