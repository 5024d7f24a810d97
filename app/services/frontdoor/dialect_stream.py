"""A Chat Completions answer stream rewritten as another dialect's events (Responses, Anthropic).

It wraps the StreamSession the inference service opened, so the job's bookkeeping (slot, record,
usage, cancel) is the session's, as for every stream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from app.services.inference import ResultStream
from app.services.translate.chat_events import ChatEvent, ChatStreamReader


class Writer(Protocol):
    content_type: str
    finished: bool

    def start(self) -> bytes: ...

    def write(self, events: list[ChatEvent]) -> bytes: ...

    def failed(self, message: str) -> bytes: ...


class DialectStream:
    def __init__(self, inner: ResultStream, writer: Writer) -> None:
        self.inner, self.writer = inner, writer

    async def chunks(self) -> AsyncIterator[bytes]:
        reader = ChatStreamReader()
        yield self.writer.start()
        try:
            async for chunk in self.inner.chunks():
                out = self.writer.write(reader.feed(chunk))
                if out:
                    yield out
            out = self.writer.write(reader.finish())
        except ValueError:  # a line that is not JSON: the session already ended the job
            out = self.writer.failed("the upstream stream broke before it finished")
        if out:
            yield out
        if not self.writer.finished:
            yield self.writer.failed("the upstream stream ended before it finished")

    async def close(self, *, cancelled: bool = False) -> None:
        await self.inner.close(cancelled=cancelled)
