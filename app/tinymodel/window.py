"""The tiny model's context window: published (or not) and enforced the way real engines refuse a
prompt longer than it, each in its own words, before the first byte. Off unless ``context_window`` is
set: then a request whose prompt tokens (whitespace-counted) plus the tokens it asks for exceed the
window is refused in the style of ``too_long_style``."""

from __future__ import annotations

from aiohttp import web

from app.services.json_types import JsonObject
from app.tinymodel.options import TinyModelOptions
from app.tinymodel.wire import STATE_KEY

DEFAULT_WINDOW = 4096  # what the tiny model publishes when no window is set


def published(opts: TinyModelOptions) -> int | None:
    """The window the model lists publish (/v1/models max_model_len, /api/ps, /api/show)."""
    if not opts.publish_window or opts.window_in_props:
        return None
    return opts.context_window or DEFAULT_WINDOW


async def props(request: web.Request) -> web.Response:
    """llama.cpp's ``GET /props``, when this tiny server plays llama.cpp: the context one slot holds
    (``--window-in-props``), and a template that takes tools and vision (``--props``)."""
    opts: TinyModelOptions = request.app[STATE_KEY].opts
    if not (opts.window_in_props or opts.llama_props):
        return web.json_response({"error": {"message": "File Not Found", "type": "not_found_error"}}, status=404)
    answer: JsonObject = {"default_generation_settings": {"n_ctx": opts.context_window or DEFAULT_WINDOW},
                              "total_slots": 1, "model_path": f"/models/{opts.models[0]}.gguf"}
    if opts.llama_props:
        answer |= {"modalities": {"vision": True},
                   "chat_template_caps": {"supports_tools": True, "supports_tool_calls": True}}
    return web.json_response(answer)


def refusal(opts: TinyModelOptions, prompt_tokens: int, asked: object) -> web.Response | None:
    window = opts.context_window
    answer = asked if isinstance(asked, int) and asked > 0 else 0
    if window is None or prompt_tokens + answer <= window:
        return None
    total = prompt_tokens + answer
    style = opts.too_long_style
    if style == "vllm":
        message = (f"This model's maximum context length is {window} tokens. However, you requested {total} "
                   f"tokens ({prompt_tokens} in the messages, {answer} in the completion). Please reduce the "
                   "length of the messages or completion.")
        return web.json_response({"object": "error", "message": message, "type": "BadRequestError",
                                  "param": None, "code": 400}, status=400)
    if style == "tgi":
        message = (f"Input validation error: `inputs` tokens + `max_new_tokens` must be <= {window}. "
                   f"Given: {prompt_tokens} `inputs` tokens and {answer} `max_new_tokens`")
        return web.json_response({"error": message, "error_type": "validation"}, status=422)
    if style == "ollama":
        return web.json_response({"error": "input length exceeds the context length"}, status=400)
    return web.json_response({"error": {
        "code": 400, "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error", "n_prompt_tokens": prompt_tokens, "n_ctx": window}}, status=400)
