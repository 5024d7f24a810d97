"""A hostile paired peer: a node's own pinned certificate, speaking the cluster protocol, saying
whatever the test tells it to.

Made from a real node that paired and then stopped: its identity and its trust store (which pins
the victim) are reused, and the hostile server listens on the stopped node's cluster address, so
the victim's pin, address and mutual TLS are all as they were. The server runs its own event loop
in a thread; the test changes ``inventory``, ``facts`` and ``reply`` between calls.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from aiohttp import web

from app.services.cluster.identity import NodeIdentity
from app.services.cluster.peer_client import API_PREFIX
from app.services.cluster.tls import server_context
from app.services.cluster.trust import TrustStore
from app.settings import parse_host_port


class HostilePeer:
    def __init__(self, home: Path, address: str, name: str) -> None:
        self.identity = NodeIdentity.load_or_create(home / "identity", name)
        self.trust = TrustStore(home / "cluster" / "trust.json")
        self.host, self.port = parse_host_port(address)
        self.node_id = self.identity.node_id
        self.inventory: dict[str, Any] = {"id": self.node_id, "name": name, "models": [],
                                          "load": {"in_flight": 0, "capacity": 4, "by_origin": {}}}
        self.facts: dict[str, Any] = {"id": self.node_id, "name": name, "engines": [], "models": [],
                                      "shared_nodes": []}
        self.reply = "from the hostile peer"
        self.relay_headers: dict[str, str] = {}
        self.relay_error: tuple[int, dict[str, Any]] | None = None  # answered instead of ``reply`` when set
        self.relayed: list[dict[str, Any]] = []
        self.raw_inventory: bytes | None = None  # sent as is instead of ``inventory`` when set
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None

    def _app(self) -> web.Application:
        async def inventory(request: web.Request) -> web.Response:
            if self.raw_inventory is not None:
                return web.Response(body=self.raw_inventory, content_type="application/json")
            return web.json_response(self.inventory)

        async def facts(request: web.Request) -> web.Response:
            return web.json_response(self.facts)

        async def relay(request: web.Request) -> web.Response:
            body = await request.json()
            self.relayed.append(body)
            if self.relay_error is not None:
                return web.json_response(self.relay_error[1], status=self.relay_error[0])
            answer = {"id": "chatcmpl-hostile", "object": "chat.completion", "created": 0, "model": body.get("model"),
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": self.reply},
                                   "finish_reason": "stop"}],
                      "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
            return web.Response(body=json.dumps(answer), content_type="application/json",
                                headers=self.relay_headers)

        async def jobs(request: web.Request) -> web.Response:
            return web.json_response({"stored": 0, "ignored": 0})

        app = web.Application()
        app.router.add_get(API_PREFIX + "/inventory", inventory)
        app.router.add_get(API_PREFIX + "/facts", facts)
        app.router.add_post(API_PREFIX + "/relay", relay)
        app.router.add_post(API_PREFIX + "/jobs/events", jobs)
        return app

    async def _start(self) -> None:
        self._runner = web.AppRunner(self._app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=server_context(self.identity, self.trust),
                           reuse_address=True)
        await site.start()

    def start(self) -> HostilePeer:
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self._start())
            except BaseException as exc:  # handed to the test's thread
                failure.append(exc)
                started.set()
                return
            started.set()
            self._loop.run_forever()

        threading.Thread(target=run, name="hostile-peer", daemon=True).start()
        started.wait(30)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
