"""Forwarding to in-process tiny model servers (the "replicas" behind endpoints, jobs and the router).

The relay streams the upstream body through as it arrives. When a stream must be inspected (router
usage) or cut (cut_stream fault), it switches to event mode: SSE events (split on a blank line) or
NDJSON lines are passed one at a time through `on_event`, which may rewrite or drop them.
"""

from __future__ import annotations

from collections.abc import Callable

import aiohttp
from aiohttp import web

from app.simulator.faults import CUT_DONE_KEY, CUT_KEY, abort
from app.tinymodel import RunningTiny, TinyModelOptions, start_tiny

EventHook = Callable[[bytes], bytes | None]
_FORWARDED = ("Content-Type", "Accept")


class Upstreams:
    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._tinies: list[RunningTiny] = []

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            # Plain HTTP to loopback tiny servers only; no proxies from the environment.
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=5))
        return self._session

    async def start_tiny(self, models: list[str], context_window: int | None = None,
                         too_long_style: str = "llamacpp") -> RunningTiny:
        tiny = await start_tiny(TinyModelOptions(models=models, context_window=context_window,
                                                 too_long_style=too_long_style))
        self._tinies.append(tiny)
        return tiny

    async def close_tiny(self, tiny: RunningTiny | None) -> None:
        if tiny is not None and tiny in self._tinies:
            self._tinies.remove(tiny)
            await tiny.close()

    async def close(self) -> None:
        for tiny in list(self._tinies):
            await self.close_tiny(tiny)
        if self._session is not None:
            await self._session.close()

    async def relay(self, request: web.Request, url: str, body: bytes | None = None,
                    on_event: EventHook | None = None) -> web.StreamResponse:
        """Forward request (method, body, content headers) to url and stream the answer back."""
        headers = {k: request.headers[k] for k in _FORWARDED if k in request.headers}
        data = await request.read() if body is None else body
        cut_after: int | None = request.get(CUT_KEY)
        async with self.session.request(request.method, url, data=data or None, headers=headers) as up:
            content_type = up.headers.get("Content-Type", "application/json")
            response = web.StreamResponse(status=up.status, headers={"Content-Type": content_type})
            streaming = content_type.startswith(("text/event-stream", "application/x-ndjson"))
            if cut_after is not None and not streaming:
                payload = await up.read()
                response.content_length = len(payload)
                await response.prepare(request)
                await response.write(payload[: len(payload) // 2])
                request[CUT_DONE_KEY] = True
                abort(request)
                return response
            await response.prepare(request)
            try:
                if on_event is None and cut_after is None:
                    async for chunk in up.content.iter_any():
                        await response.write(chunk)
                else:
                    sep = b"\n\n" if content_type.startswith("text/event-stream") else b"\n"
                    if await self._relay_events(request, response, up, sep, on_event, cut_after):
                        return response
                await response.write_eof()
            except ConnectionError:
                pass  # the client went away; nothing left to answer
            return response

    @staticmethod
    async def _relay_events(request: web.Request, response: web.StreamResponse, up: aiohttp.ClientResponse,
                            sep: bytes, on_event: EventHook | None, cut_after: int | None) -> bool:
        """Relay event by event; True when the connection was cut on purpose."""
        buffer, sent = b"", 0
        async for chunk in up.content.iter_any():
            buffer += chunk
            while sep in buffer:
                event, buffer = buffer.split(sep, 1)
                out = on_event(event + sep) if on_event else event + sep
                if out is None:
                    continue
                if cut_after is not None and sent >= cut_after:
                    request[CUT_DONE_KEY] = True
                    abort(request)
                    return True
                await response.write(out)
                sent += 1
        if buffer:
            await response.write(buffer)
        return False
