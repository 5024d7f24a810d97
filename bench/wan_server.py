"""The far end of the bench's rented link: the tiny model behind TLS, counting TLS handshakes.

``python -m bench.wan_server --host ADDR --tls-dir DIR`` (run inside the link's namespace) makes a
CA and a certificate for ADDR (``app.simulator.ca``), serves ``app.tinymodel``'s OpenAI API on
``https://ADDR:PORT`` and prints ``{"url": ..., "ca_file": ...}``. ``GET /_wan/stats`` says how many
TLS handshakes it has taken (OpenSSL's server-name callback runs once per ClientHello, with or
without SNI) and how many of the connections that carried an inference request are still open.
Also run on 127.0.0.1 by tests/bench/test_rented_link.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import ssl
import sys
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from app.simulator.ca import generate_tls, server_ssl_context
from app.tinymodel import TinyModelOptions, create_app

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

async def serve(args: argparse.Namespace) -> None:
    tls = generate_tls(Path(args.tls_dir), ips=(args.host,))
    context = server_ssl_context(tls)
    app = create_app(TinyModelOptions(models=[args.model], api="openai", reply_tokens=args.reply_tokens))
    handshakes = 0

    def hello(_sock: ssl.SSLObject, _name: str | None, _ctx: ssl.SSLContext) -> None:
        nonlocal handshakes
        handshakes += 1

    carried: weakref.WeakSet[asyncio.BaseTransport] = weakref.WeakSet()

    @web.middleware
    async def inference(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method == "POST" and request.path.startswith("/v1/") and request.transport is not None:
            carried.add(request.transport)
        return await handler(request)

    async def stats(_request: web.Request) -> web.Response:
        open_now = sum(1 for transport in carried if not transport.is_closing())
        return web.json_response({"handshakes": handshakes, "inference_open": open_now})

    context.sni_callback = hello
    app.middlewares.insert(0, inference)
    app.router.add_get("/_wan/stats", stats)
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0, access_log=None,
                           keepalive_timeout=args.keepalive_s)
    await runner.setup()
    site = web.TCPSite(runner, args.host, 0, ssl_context=context)
    await site.start()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    port = runner.addresses[0][1]
    print(json.dumps({"url": f"https://{args.host}:{port}", "ca_file": str(tls.ca_file)}), flush=True)
    await stop.wait()
    await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wan_server", description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--tls-dir", required=True)
    parser.add_argument("--model", default="tiny:latest")
    parser.add_argument("--reply-tokens", type=int, default=1000000)
    parser.add_argument("--keepalive-s", type=float, default=75.0, help="the server's idle timeout (aiohttp's 75)")
    asyncio.run(serve(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
