"""The pass-through splice's caller side: a StreamSession's answer written down as it arrives.

``StreamSession.chunks`` is an async generator the writer iterates: a task wake, a generator step
and an awaited write per chunk. When the answer came on the splice's own connection
(``backends/splice_client.py``) and only needs the pass-through's reading (usage, the model's name,
the hidden usage chunk), ``splice`` instead hands the upstream a sink: each piece goes through the
translator and onto the caller's transport inside the upstream's ``data_received``. The outcome is
the same as ``chunks`` gives, word for word (the same error line in the caller's API, the same job
state and error), which is why both read ``StreamSession``'s own helpers. Flow control: a caller
slower than the engine pauses the engine's connection until the caller's buffer has drained.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from app.services.backends.base import Spliceable
from app.services.errors import PairwiseError, UpstreamCut, UpstreamError
from app.services.inference import ResultStream, StreamSession
from app.services.translate.responses import PassThrough


class CallerOut(Protocol):
    """The caller's side of the wire: framed synchronous writes and a way to wait for a full buffer."""

    def send(self, data: bytes) -> bool:
        """Write ``data``, framed; True when the caller's buffer is now over its mark (pause the engine)."""
        ...

    def closing(self) -> bool: ...

    async def drained(self) -> None: ...


def spliceable(stream: ResultStream) -> Spliceable | None:
    """The upstream end to splice, when this stream may be written by push: a StreamSession (not a
    dialect's rewriting of one) passing through, on a connection of the splice's own."""
    if isinstance(stream, StreamSession) and isinstance(stream.translator, PassThrough):
        return stream.opened.splice
    return None


class _Splicer:
    def __init__(self, session: StreamSession, upstream: Spliceable, out: CallerOut,
                 done: asyncio.Future[bool]) -> None:
        self.session, self.upstream, self.out, self.done = session, upstream, out, done
        self._last = b""  # the last bytes written: a caller left mid-line gets an error on a line of its own
        self._draining: asyncio.Task[None] | None = None
        # Bound once: ``piece`` runs once per read of the engine's answer, and a bound method made
        # per call costs about as much as a small call (bench/README.md, *fewer Python calls per read*).
        self._settled, self._feed = done.done, session.translator.feed
        self._closing, self._send = out.closing, out.send

    @property
    def mid_line(self) -> bool:
        return bool(self._last) and not self._last.endswith(b"\n")

    def _emit(self, data: bytes) -> bool:
        """Write the tail to the caller; False (and the splice over) when the caller has gone."""
        if self._closing():
            self._over(False)
            return False
        self._last = data
        self._send(data)  # the stream's last bytes: nothing more to hold back
        return True

    def _over(self, delivered: bool) -> None:
        if not self.done.done():
            self.upstream.pause_reading()  # nothing more is wanted; closing the session closes it
            self.done.set_result(delivered)

    def _fail(self, state_error: str, caller_text: str) -> None:
        session = self.session
        session.state, session.error = "failed", state_error
        if not self._closing():
            self._send(session.error_chunk(caller_text, self.mid_line))
        self._over(not self._closing())

    def piece(self, data: bytes) -> None:
        # Once per read: ``_emit`` inlined (the caller's ``closing`` is its transport's own, ``send``
        # frames, writes and says whether the caller is backed up), the rest only when it is needed.
        if self._settled():
            return
        try:
            out = self._feed(data)
        except PairwiseError as exc:  # a line over the cap
            self._fail(exc.message, exc.message)
            return
        except ValueError as exc:
            self._fail(f"upstream stream broke: {type(exc).__name__}", "the upstream stream broke before it finished")
            return
        if out:
            if self._closing():
                self._over(False)
                return
            self._last = out
            if self._send(out):
                self._hold_back()

    def _hold_back(self) -> None:
        """The caller is slower than the engine: stop reading the engine until its buffer drains."""
        self.upstream.pause_reading()
        if self._draining is None:
            self._draining = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            await self.out.drained()
        finally:
            self._draining = None
        if self.out.closing():
            self._over(False)
        elif not self.done.done():
            self.upstream.resume_reading()

    def ended(self, error: UpstreamError | None) -> None:
        if self.done.done():
            return
        translator = self.session.translator
        if isinstance(error, UpstreamCut) and translator.finished_cleanly:
            # The final chunk was here before the connection broke: the answer is whole.
            tail = self.session.finish_after_break(translator)
        elif error is not None:  # cut before its end, or stalled
            self._fail(error.message, error.message)
            return
        else:
            try:
                tail = translator.finish()
            except PairwiseError as exc:
                self._fail(exc.message, exc.message)
                return
            except ValueError as exc:
                self._fail(f"upstream stream broke: {type(exc).__name__}",
                           "the upstream stream broke before it finished")
                return
        if tail and not self._emit(tail):
            return
        if not translator.finished_cleanly:
            self._fail("upstream stream ended without its final chunk", "the upstream stream ended before it finished")
            return
        self._over(not self.out.closing())

    def start(self) -> None:
        self.piece(self.session.opened.first_chunk)
        if not self.done.done():
            self.upstream.push_to(self)


async def splice(session: StreamSession, upstream: Spliceable, out: CallerOut) -> bool:
    """Write the session's answer to ``out`` as it arrives; True when the caller got all of it (the
    same moment ``chunks`` would have been exhausted), False when the caller went away first."""
    done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    splicer = _Splicer(session, upstream, out, done)
    splicer.start()
    try:
        return await done
    finally:
        if splicer._draining is not None:
            splicer._draining.cancel()
