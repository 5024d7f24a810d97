"""Options of the tiny model server; mutable at run time through POST /_tiny/config."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

from app.services.json_types import JsonObject

ApiKind = Literal["openai", "ollama", "both"]
FailMode = Literal[None, "refuse", "500", "hang", "cut", "long_line", "bad_tool_arguments", "stall",
                   "no_terminator", "not_an_object", "ping_then_hang"]

API_KINDS: tuple[str, ...] = ("openai", "ollama", "both")
FAIL_MODES: tuple[str | None, ...] = (None, "refuse", "500", "hang", "cut", "long_line", "bad_tool_arguments", "stall",
                                      "no_terminator", "not_an_object", "ping_then_hang")


@dataclass
class TinyModelOptions:
    models: list[str] = field(default_factory=lambda: ["tiny:latest"])
    api: ApiKind = "both"
    # Delay before the response headers, to mimic a cold or busy engine.
    first_byte_delay_s: float = 0.0
    # Pacing of streamed chunks; 0 streams as fast as the socket takes them.
    tokens_per_s: float = 0.0
    fail_mode: FailMode = None
    cut_after_chunks: int = 3  # "cut" drops the connection there; "stall" goes silent, keeping it open
    # "long_line": after the first streamed chunk, one line this long (a misbehaving upstream);
    # "bad_tool_arguments": tool calls whose arguments are not JSON (OpenAI API);
    # "ping_then_hang": an event stream's keep-alive comment (": ping"), then silence with the connection
    # open, as llama-cpp-python's server reading a long prompt; JSON answers are not affected.
    # "no_terminator": a stream sent whole, final chunk included, then the connection dropped instead of
    # the chunked encoding's last empty chunk (an engine that closes as soon as it is done).
    long_line_bytes: int = 50 * 1024 * 1024
    embedding_dim: int = 8
    require_token: str | None = None
    # The models /api/ps reports loaded (Ollama API); None: every model.
    loaded: list[str] | None = None
    # Answer llama.cpp's GET /props (OpenAI API): a template that takes tools, and vision.
    llama_props: bool = False
    # Tool calls in one answer (Ollama API): one per offered tool, up to this many.
    tool_calls: int = 1
    # Length of a reply when the request sets no lower max_tokens/num_predict.
    reply_tokens: int = 12
    # The context window (window.py): None publishes 4096 and enforces nothing; set, it is published
    # (unless publish_window is off) and a longer request is refused in too_long_style's words.
    context_window: int | None = None
    publish_window: bool = True
    loaded_window: int | None = None  # Ollama API: the context /api/ps reports and a request without num_ctx gets
    window_in_props: bool = False  # as llama.cpp's server: the window in GET /props, not in /v1/models
    too_long_style: str = "llamacpp"  # llamacpp | vllm | tgi | ollama
    owned_by: str = "tinymodel"  # what /v1/models says of each model ("vllm" as vLLM's server does)

    def update(self, changes: JsonObject) -> None:
        """Apply a JSON subset of options, validating names and the enum-like values."""
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(f"unknown option(s): {', '.join(sorted(unknown))}")
        if "api" in changes and changes["api"] not in API_KINDS:
            raise ValueError(f"api must be one of {API_KINDS}")
        if "fail_mode" in changes and changes["fail_mode"] not in FAIL_MODES:
            raise ValueError(f"fail_mode must be one of {FAIL_MODES}")
        if "models" in changes:
            models = changes["models"]
            if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
                raise ValueError("models must be a list of strings")
        for key, value in changes.items():
            setattr(self, key, value)

    def as_dict(self) -> JsonObject:
        return {f.name: getattr(self, f.name) for f in fields(self)}
