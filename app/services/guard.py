"""The boundaries where a broad exception is caught: the top of a long-lived task, a hook runner, a
loop over providers. Everywhere else errors are the tree's (``errors.py``) and are caught by name.

``guarded(what, logger, tell)`` is that one catch: an exception (cancellation is not one) is logged
with its traceback and, where money or routing is concerned, told through ``tell(what, exc)``
(a ``FailureNotices``: a ``Notice`` on the bus, once per distinct failure), then the loop, the stop
sequence or the other hooks go on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from app.services.events import Event, Notice
from app.services.secrets import redact

Row = TypeVar("Row")

Tell = Callable[[str, Exception], None]


@contextmanager
def guarded(what: str, logger: logging.Logger, tell: Tell | None = None) -> Iterator[None]:
    try:
        yield
    except Exception as exc:  # the boundary itself: logged in full, told, and the caller goes on
        logger.exception("%s failed", what)
        if tell is not None:
            tell(what, exc)


class FailureNotices:
    """Tells failures as ``Notice`` events, each once until a different one happens (a loop that
    fails on every tick says so once, not every tick)."""

    def __init__(self, publish: Callable[[Event], None], node: str | None = None) -> None:
        self.publish, self.node = publish, node
        self._last: dict[str, str] = {}

    def __call__(self, what: str, exc: Exception) -> None:
        text = redact(f"{type(exc).__name__}: {exc}")
        if self._last.get(what) == text:
            return
        self._last[what] = text
        self.publish(Notice(title=f"{what} failed", message=f"{text} (details in the node's log)", level="error",
                            node=self.node))


def collect(providers: Iterable[Callable[[], Iterable[Row]]], what: str, logger: logging.Logger) -> list[Row]:
    """Every row the providers give; one provider's failure is logged and costs only its rows."""
    rows: list[Row] = []
    for provider in list(providers):
        # ``guarded``'s boundary, written out: the registry collects on every request, and a generator's
        # context manager per provider was a fifth of an idle node's registry walk.
        try:
            rows.extend(provider())
        except Exception:
            logger.exception("%s failed", what)
    return rows
