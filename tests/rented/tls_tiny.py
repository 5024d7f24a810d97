"""The tiny model behind HTTPS with a CA made for the test: an "OpenAI-compatible rented endpoint".

``python -m tests.rented.tls_tiny --tls-dir DIR [--require-token T] [--model M ...]`` prints
{"url": "https://127.0.0.1:P", "ca_file": ...}. Besides the tiny model's own /_tiny/ controls,
POST /_tls/warm {"count": n} makes the next n inference calls answer 503 "model is loading"
(a cold endpoint), and GET /_tls/warm tells how many are left.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from app.simulator.ca import generate_tls, server_ssl_context
from app.tinymodel import TinyModelOptions, create_app

WARM = web.AppKey("warm", dict)


@web.middleware
async def warming(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                  ) -> web.StreamResponse:
    left = request.app[WARM]
    if request.method == "POST" and request.path.startswith("/v1/") and left["count"] > 0:
        left["count"] -= 1
        return web.json_response({"error": {"message": "model is loading", "type": "server_error"}}, status=503)
    return await handler(request)


async def warm(request: web.Request) -> web.Response:
    if request.method == "POST":
        request.app[WARM]["count"] = int((await request.json()).get("count", 0))
    return web.json_response(request.app[WARM])


def build(opts: TinyModelOptions) -> web.Application:
    app = create_app(opts)
    app.middlewares.insert(0, warming)
    app[WARM] = {"count": 0}
    app.router.add_route("*", "/_tls/warm", warm)
    return app


async def serve(args: argparse.Namespace) -> None:
    tls = generate_tls(Path(args.tls_dir))
    opts = TinyModelOptions(models=args.models or ["tiny:latest"], api="openai", require_token=args.require_token,
                            tokens_per_s=args.tokens_per_s, first_byte_delay_s=args.first_byte_delay_s)
    runner = web.AppRunner(build(opts), handler_cancellation=True, shutdown_timeout=1.0, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port, ssl_context=server_ssl_context(tls))
    await site.start()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    print(json.dumps({"url": f"https://127.0.0.1:{runner.addresses[0][1]}", "ca_file": str(tls.ca_file)}),
          flush=True)
    await stop.wait()
    await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls-dir", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--require-token")
    parser.add_argument("--model", action="append", dest="models")
    parser.add_argument("--tokens-per-s", type=float, default=0.0)
    parser.add_argument("--first-byte-delay-s", type=float, default=0.0)
    asyncio.run(serve(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
