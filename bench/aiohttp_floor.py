"""The floor of Pairwise's own stack: a bare relay on the libraries a node uses, and nothing else.

Same server (aiohttp), same data-plane client (aiohttp's, one pooled session), same loop (uvloop
where installed, as the headless node), same per-chunk shape (read what arrived, write it as one
chunk of a chunked response): no routing, no job record, no translation, no usage capture. What a
Pairwise node spends above this path is Pairwise's own logic; what this path spends above nginx is
the price of Python, asyncio and aiohttp. The bench runs it as the ``aiohttp_floor`` path.

``python -m bench.aiohttp_floor --upstream http://127.0.0.1:PORT --port N [--ca-file CA]``

With ``--ca-file`` (an HTTPS upstream: the rented link's floor in ``bench/wan.py``) its client trusts
what a node with that rented endpoint trusts (the system store and the CA, verification on).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import httpx
from aiohttp import web

from app.harness import child_env, free_port, stop_process, wait_until
from app.services import eventloop
from app.services.outbound import outbound_ssl_context

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


def make_app(upstream: str, ca_file: str | None = None, keepalive_s: float = 15.0) -> web.Application:
    app = web.Application()
    state: dict[str, aiohttp.ClientSession] = {}
    tls = outbound_ssl_context((ca_file,)) if ca_file else True

    async def session() -> aiohttp.ClientSession:
        if "s" not in state:
            state["s"] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=1024, limit_per_host=0, ssl=tls, keepalive_timeout=keepalive_s),
                auto_decompress=False,
                timeout=aiohttp.ClientTimeout(total=None, sock_read=20))
        return state["s"]

    async def relay(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        client = await session()
        async with client.request(request.method, upstream + request.path_qs, data=body or None,
                                  headers={"content-type": request.headers.get("content-type",
                                                                               "application/json")}) as answer:
            response = web.StreamResponse(status=answer.status, headers={
                k: v for k, v in answer.headers.items() if k.lower() not in HOP_HEADERS})
            await response.prepare(request)
            while True:
                chunk = await answer.content.readany()
                if not chunk:
                    break
                await response.write(chunk)
            await response.write_eof()
            return response

    async def close(_app: web.Application) -> None:
        if "s" in state:
            await state["s"].close()

    app.router.add_route("*", "/{tail:.*}", relay)
    app.on_cleanup.append(close)
    return app


async def serve(upstream: str, port: int, ca_file: str | None = None, keepalive_s: float = 15.0) -> None:
    runner = web.AppRunner(make_app(upstream.rstrip("/"), ca_file, keepalive_s), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        await asyncio.Event().wait()  # until the bench stops the process
    finally:
        await runner.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.aiohttp_floor", description=__doc__)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca-file", help="an HTTPS upstream's CA (PEM), trusted with the system store")
    parser.add_argument("--keepalive-s", type=float, default=15.0, help="its pool's keep-alive (aiohttp's default)")
    args = parser.parse_args()
    eventloop.run(serve(args.upstream, args.port, args.ca_file, args.keepalive_s))  # the headless node's loop: uvloop where installed
    return 0


class FloorRelay:
    """The floor relay as a subprocess of the bench."""

    module = "bench.aiohttp_floor"

    def __init__(self, upstream_url: str, log: Path, ca_file: str | None = None,
                 keepalive_s: float | None = None) -> None:
        self.upstream = upstream_url
        self.extra_args = ["--ca-file", ca_file] if ca_file else []
        if keepalive_s is not None:
            self.extra_args += ["--keepalive-s", str(keepalive_s)]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    def start(self) -> FloorRelay:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", self.module, "--upstream", self.upstream,
                                          "--port", str(self.port), *self.extra_args], stdout=out, stderr=subprocess.STDOUT,
                                         env=child_env(), cwd=Path(__file__).resolve().parent.parent)

        def answers() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"{self.module} exited: {self.log.read_text(errors='replace')[-2000:]}")
            try:
                return httpx.get(f"{self.url}/v1/models", timeout=1, trust_env=False).status_code == 200
            except httpx.HTTPError:
                return False

        began = time.perf_counter()
        wait_until(answers, 30, f"{self.module} to answer", interval=0.01)
        self.startup_s = time.perf_counter() - began
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        stop_process(self.proc, wait_s=10)


if __name__ == "__main__":
    sys.exit(main())
