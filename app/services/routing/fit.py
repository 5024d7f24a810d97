"""Fit before load: how many tokens a request takes, and whether a copy's window holds it.

The size is an estimate made before any engine is asked, so it leans high: one token per 3.5 bytes of
text (English runs near 4 characters a token, code and other languages fewer), a few tokens of
framing per message, tools as their JSON, an image as a fixed allowance, plus the tokens the request
asks for (``max_tokens``, ``max_completion_tokens``, Ollama's ``num_predict``), up to ``ANSWER_ROOM``. A copy whose window is
unknown stays a candidate: if it refuses the request as too long before its first byte, the request
moves to the next copy (``is_too_long`` knows the engines' wordings).

Near a window's edge (the estimate over the window, but by less than ``EDGE`` times) the estimate may
be what stands between a request and a copy that holds it, so the engine's own tokenizer is asked where
it has one (``backends/tokenize.py``, bounded in time): the text's exact count, plus the same framing
and image allowances and ``TEMPLATE_ROOM`` for the chat template, decides for that copy (``exact_sizes``).
Without an answer the estimate decides.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any

from app.services.backends.base import Upstream
from app.services.backends.windows import positive_int

BYTES_PER_TOKEN = 3.5
PER_MESSAGE = 4
PER_IMAGE = 768  # what vision models commonly spend on one image tile set
# A max_tokens larger than this is a cap, not a need: many clients send 4096 or more on every call, and an
# engine whose window ends first stops the answer there (llama.cpp, Ollama; vLLM refuses, and the request
# moves on). Routing a short prompt to a rented GPU for the sake of such a cap would cost money for nothing.
ANSWER_ROOM = 512
EDGE = 2.0  # English runs near 4-6 bytes a token, so an estimate this far over a window may still fit
# A tokenizer counts the text, not the chat template around it (role markers, a default system prompt:
# SmolLM2's adds about 25 tokens): this much is kept for it on top of an exact count.
TEMPLATE_ROOM = 64
WINDOW_STEP = 1024  # a num_ctx asked of Ollama is rounded up to this, so close sizes share one load

# How engines refuse a prompt longer than their window, before the first byte.
TOO_LONG = re.compile("|".join((
    r"exceeds? the available context size",  # llama.cpp server (exceed_context_size_error)
    r"exceed_context_size",
    r"maximum context length is \d+ tokens",  # vLLM, OpenAI
    r"context length exceeded|context_length_exceeded",
    r"input length exceeds the context length",  # Ollama (truncate: false)
    r"prompt is too long|too many tokens",
    r"must be <= \d+\. Given: \d+ `inputs` tokens",  # TGI
    r"`inputs` tokens \+ `max_new_tokens` must be",
    r"input validation error: `inputs` must have less than",  # TGI, older
    r"no copy of model .* can hold this request",  # a peer's Pairwise: none of its copies holds it
)), re.IGNORECASE)


@dataclass(frozen=True)
class RequestSize:
    prompt: int  # estimated prompt tokens
    answer: int  # tokens the request asks for (0: it names no limit)
    num_ctx: int | None = None  # Ollama's options.num_ctx: the window the caller asks an Ollama engine for
    counted: bool = False  # the prompt's tokens as the engine's tokenizer counted them, not estimated

    @property
    def room(self) -> int:
        """The answer tokens a copy must have room for: what the request asks, up to ANSWER_ROOM."""
        return min(self.answer, ANSWER_ROOM)

    @property
    def total(self) -> int:
        """Tokens a copy's window must hold: the prompt, and room for the answer."""
        return self.prompt + self.room


def _text_tokens(value: object) -> int:
    if isinstance(value, str):
        return math.ceil(len(value.encode()) / BYTES_PER_TOKEN)
    if isinstance(value, list):  # OpenAI content parts
        total = 0
        for part in value:
            if isinstance(part, dict) and part.get("type") in ("image_url", "input_image", "image"):
                total += PER_IMAGE
            elif isinstance(part, dict):
                total += _text_tokens(part.get("text") or part.get("input_text") or "")
            else:
                total += _text_tokens(part)
        return total
    if value is None:
        return 0
    return _text_tokens(json.dumps(value))


def _message_tokens(message: Any) -> int:
    if not isinstance(message, dict):
        return _text_tokens(message)
    total = PER_MESSAGE + _text_tokens(message.get("content"))
    images = message.get("images")
    if isinstance(images, list):  # Ollama's
        total += PER_IMAGE * len(images)
    for key in ("tool_calls", "thinking", "reasoning_content"):
        if message.get(key):
            value = message[key]
            total += _text_tokens(value if isinstance(value, str) else json.dumps(value, default=str))
    return total


def estimate(body: dict[str, Any]) -> RequestSize:
    """The request's size in tokens, either API's chat, completion or embedding body."""
    prompt = 3
    messages = body.get("messages")
    if isinstance(messages, list):
        prompt += sum(_message_tokens(m) for m in messages)
    for key in ("prompt", "system", "suffix", "input"):
        if key in body:
            prompt += _text_tokens(body[key])
    if isinstance(body.get("images"), list):
        prompt += PER_IMAGE * len(body["images"])
    if body.get("tools"):
        prompt += _text_tokens(json.dumps(body["tools"], default=str))
    raw_options = body.get("options")
    options: dict[str, Any] = raw_options if isinstance(raw_options, dict) else {}
    asked = next((positive_int(v) for v in (body.get("max_completion_tokens"), body.get("max_tokens"),
                                            options.get("num_predict")) if positive_int(v)), None)
    return RequestSize(prompt=prompt, answer=asked or 0, num_ctx=positive_int(options.get("num_ctx")))


def _ollama_engine(upstream: Upstream) -> bool:
    return upstream.kind == "engine" and upstream.api_for("ollama") == "ollama"


def _trained(upstream: Upstream, canonical: str) -> int | None:
    entry = upstream.entry_for(canonical)
    return positive_int(entry.details.get("trained_context_length")) if entry is not None else None


def window_for(upstream: Upstream, canonical: str, size: RequestSize) -> int | None:
    """The window this request can have on the copy: an Ollama engine loads a model with the num_ctx a
    request asks for, up to its trained length (``with_window`` asks for it); every other engine has the
    window it was started with, as does a copy whose window the user declared."""
    window = upstream.window(canonical)
    if not _ollama_engine(upstream) or upstream.declared_window is not None:
        return window
    trained = _trained(upstream, canonical)
    return max(window or 0, trained or 0) or None


def with_window(upstream: Upstream, canonical: str, size: RequestSize, body: dict[str, Any]) -> dict[str, Any]:
    """The body for an Ollama engine, with a num_ctx that holds the request when the one it would get
    (the caller's, else the copy's usual window) is too small: Ollama would cut the prompt silently."""
    if not _ollama_engine(upstream) or upstream.declared_window is not None:
        return body
    usual = size.num_ctx or upstream.window(canonical)
    if usual is None or size.total <= usual:
        return body
    wanted = math.ceil(size.total / WINDOW_STEP) * WINDOW_STEP
    trained = _trained(upstream, canonical)
    raw = body.get("options")
    options = dict(raw) if isinstance(raw, dict) else {}
    options["num_ctx"] = min(wanted, trained) if trained else wanted
    return {**body, "options": options}


def holds(window: int | None, size: RequestSize) -> bool:
    """Whether a copy of ``window`` (``window_for``) can hold the request; an unknown window is given the benefit."""
    return window is None or size.total <= window


def is_too_long(status: int, text: str) -> bool:
    """An engine's refusal of a request longer than its window (so another copy may still hold it)."""
    return status in (400, 413, 422, 500) and bool(TOO_LONG.search(text))


def prompt_text(body: dict[str, Any]) -> tuple[str, int]:
    """The request's text as one string for a tokenizer, and the tokens ``estimate`` adds beside the text
    (framing per message, images), so an exact count replaces only the part that was estimated."""
    texts: list[str] = []
    extra = 3
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            texts.append(str(message))
            continue
        extra += PER_MESSAGE + PER_IMAGE * len(message.get("images") or [])
        content = message.get("content")
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type") in ("image_url", "input_image", "image"):
                extra += PER_IMAGE
            elif isinstance(part, dict):
                texts.append(str(part.get("text") or part.get("input_text") or ""))
        for key in ("tool_calls", "thinking", "reasoning_content"):
            if message.get(key):
                value = message[key]
                texts.append(value if isinstance(value, str) else json.dumps(value, default=str))
    for key in ("prompt", "system", "suffix", "input"):
        value = body.get(key)
        if isinstance(value, str):
            texts.append(value)
        elif value is not None:
            texts.append(json.dumps(value, default=str))
    if isinstance(body.get("images"), list):
        extra += PER_IMAGE * len(body["images"])
    if body.get("tools"):
        texts.append(json.dumps(body["tools"], default=str))
    return "\n".join(texts), extra


Copies = list[tuple[Upstream, int | None]]


def copies_of(upstreams: list[Upstream], canonical: str, size: RequestSize | None) -> Copies:
    """The upstreams that have the model, in order, each with its window for the request (``window_for``;
    None without a size): looked up once per request for both the exact counts and the plan."""
    return [(u, window_for(u, canonical, size) if size is not None else None)
            for u in upstreams if u.upstream_model(canonical) is not None]


def near_edge(window: int | None, size: RequestSize) -> bool:
    """The estimate says the copy (of ``window``) cannot hold the request, but an exact count might say it can."""
    return window is not None and window < size.total <= window * EDGE


async def exact_sizes(copies: Copies, canonical: str, size: RequestSize, body: dict[str, Any]) -> dict[str, RequestSize]:
    """For each copy near its window's edge whose engine counts tokens: the request's size by that count."""
    near = [u for u, window in copies if near_edge(window, size)]
    if not near:
        return {}
    text, extra = prompt_text(body)
    counts = await asyncio.gather(*(u.count_tokens(str(u.upstream_model(canonical)), text) for u in near))
    return {u.key: replace(size, prompt=count + extra + TEMPLATE_ROOM, counted=True) for u, count in zip(near, counts, strict=True)
            if count is not None}
