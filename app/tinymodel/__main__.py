"""`python -m app.tinymodel`: run the tiny model server until SIGTERM/SIGINT.

Prints one JSON line {"url": ...} once listening, so a parent process can read the port.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from app.services.platform.signals import stop_event
from app.tinymodel.options import API_KINDS, FAIL_MODES, TinyModelOptions
from app.tinymodel.server import start_tiny


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.tinymodel", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api", choices=API_KINDS, default="both")
    parser.add_argument("--model", action="append", dest="models", metavar="NAME")
    parser.add_argument("--first-byte-delay-s", type=float, default=0.0)
    parser.add_argument("--tokens-per-s", type=float, default=0.0)
    parser.add_argument("--fail-mode", choices=[m for m in FAIL_MODES if m], default=None)
    parser.add_argument("--require-token", default=None)
    parser.add_argument("--reply-tokens", type=int, default=12)
    parser.add_argument("--context-window", type=int, default=None, help="publish and enforce this window")
    parser.add_argument("--hide-window", action="store_true", help="enforce the window but do not publish it")
    parser.add_argument("--loaded-window", type=int, default=None, help="Ollama API: the loaded context")
    parser.add_argument("--window-in-props", action="store_true", help="publish the window in /props only")
    parser.add_argument("--too-long-style", choices=("llamacpp", "vllm", "tgi", "ollama"), default="llamacpp")
    parser.add_argument("--loaded", action="append", metavar="NAME", help="the models /api/ps lists (default: all)")
    parser.add_argument("--owned-by", default="tinymodel", help="/v1/models' owned_by (vllm: as vLLM says)")
    parser.add_argument("--props", action="store_true", help="answer llama.cpp's /props (tools and vision)")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    opts = TinyModelOptions(
        models=args.models or ["tiny:latest"], api=args.api, first_byte_delay_s=args.first_byte_delay_s,
        tokens_per_s=args.tokens_per_s, fail_mode=args.fail_mode, require_token=args.require_token,
        reply_tokens=args.reply_tokens, context_window=args.context_window, publish_window=not args.hide_window,
        too_long_style=args.too_long_style, window_in_props=args.window_in_props,
        loaded_window=args.loaded_window, llama_props=args.props, loaded=args.loaded,
        owned_by=args.owned_by,
    )
    stop, _ = stop_event(asyncio.get_running_loop())
    tiny = await start_tiny(opts, host=args.host, port=args.port)
    print(json.dumps({"url": tiny.url}), flush=True)
    try:
        await stop.wait()
    finally:
        await tiny.close()


def main(argv: list[str] | None = None) -> int:
    asyncio.run(serve(parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
