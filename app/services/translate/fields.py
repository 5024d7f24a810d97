"""Each request field of each API, in one row: its check (type, range or shape), its fate when the
request crosses to the other API, how, and, for a plain copy, the name it takes there.

From these rows are made: validation (validate.py: a 400 naming the field, in the caller's shape),
refusal and copying (to_openai.py, to_ollama.py), and the README's field tables
(fields_markdown.py; tests/unit/test_field_table.py keeps the two the same). A field added here is
validated, translated and documented with no second edit; tests/node/test_request_validation.py
sends each checked field a wrong value, tests/unit/test_field_arrival.py each passed one across.

Fates: ``passed`` (same name and meaning), ``translated`` (another name or shape),
``dropped`` (a hint with no effect on the output), ``refused`` (400 naming the field).
Paths: ``options.temperature`` is a key of ``options``; ``messages[].images`` a key of each message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

from app.services.translate.checks import (
    BOOL,
    CONTENT,
    IMAGE_URL,
    INT,
    INTS,
    KEEP_ALIVE,
    MESSAGES,
    MODEL,
    NULL_OR_STRING,
    NUMBER,
    OBJECT,
    OLLAMA_FORMAT,
    OLLAMA_TOOL_CALLS,
    OPENAI_TOOL_CALLS,
    PROMPT,
    STOP,
    STRING,
    STRINGS,
    TEXT_OR_TEXTS,
    THINK,
    TOOL_CHOICE,
    TOOLS,
    Check,
    choice,
    fields,
    integer,
)

Fate = Literal["passed", "translated", "dropped", "refused"]


class Field(NamedTuple):
    """One field's row. ``check`` applies on the operations ``on`` (all when empty), or is one check
    per operation; ``required`` is True (wherever it is checked) or the operations that need it;
    ``to`` is the other API's name for a field that is copied as it is."""

    fate: Fate
    how: str = ""
    check: Check | Mapping[str, Check] | None = None
    on: tuple[str, ...] = ()
    required: bool | tuple[str, ...] = False
    to: str = ""

    def check_for(self, operation: str) -> Check | None:
        if isinstance(self.check, Mapping):
            return self.check.get(operation)
        return self.check if not self.on or operation in self.on else None

    def required_on(self, operation: str) -> bool:
        needed = self.required if isinstance(self.required, bool) else operation in self.required
        return needed and self.check_for(operation) is not None


Table = dict[str, Field]
CHAT, GENERATE, INFER, EMBED = ("chat",), ("complete",), ("chat", "complete"), ("embed", "embed_legacy")
F = Field

# Ollama caller -> OpenAI-API engine (/api/chat, /api/generate, /api/embed, /api/embeddings).
# The checks are Ollama's own (https://github.com/ollama/ollama/blob/main/docs/api.md).
OLLAMA_TO_OPENAI: Table = {
    "model": F("translated", "the engine's name for the model; answers carry the name the caller sent", MODEL,
               required=True),
    "messages": F("translated", "roles and text as is; see images, tool_calls, tool_name, thinking", MESSAGES,
                  on=CHAT),
    "messages[].role": F("passed", "", STRING, on=CHAT, required=True),
    "messages[].content": F("passed", "the text (see images)", NULL_OR_STRING, on=CHAT),
    "messages[].images": F("translated", "base64 images become image_url parts with data: URLs", STRINGS, on=CHAT),
    "messages[].tool_calls": F("translated", "arguments object -> JSON string; each call gets an id",
                               OLLAMA_TOOL_CALLS, on=CHAT),
    "messages[].tool_name": F("translated", "tool_call_id of the assistant call it answers", STRING, on=CHAT),
    "messages[].thinking": F("dropped", "earlier reasoning is not sent back to the model", STRING, on=CHAT),
    "prompt": F("passed", "to /v1/completions; system is put before it", STRING, on=("complete", "embed_legacy")),
    "system": F("translated", "put before the prompt (generate)", STRING, on=GENERATE),
    "suffix": F("passed", "completions suffix", STRING, on=GENERATE),
    "raw": F("dropped", "/v1/completions takes the prompt as is (raw)", BOOL, on=GENERATE),
    "images": F("refused", "/v1/completions takes no images; use /api/chat (an empty list is no images)", STRINGS,
                on=GENERATE),
    "template": F("refused", "an OpenAI-API engine applies its own template", STRING, on=GENERATE),
    "context": F("refused", "token context of an earlier answer has no OpenAI counterpart", INTS, on=GENERATE),
    "tools": F("passed", "same shape in both APIs", TOOLS, on=CHAT),
    "format": F("translated", "\"json\" -> response_format json_object; a schema -> json_schema", OLLAMA_FORMAT,
                on=INFER),
    "think": F("translated", "a level -> reasoning_effort; true -> \"medium\"; false -> "
                             "chat_template_kwargs.enable_thinking=false", THINK, on=INFER),
    "logprobs": F("passed", "chat: logprobs; generate: logprobs as top_logprobs count", BOOL, on=INFER),
    "top_logprobs": F("passed", "chat: top_logprobs", integer(0, 20), on=INFER),
    "stream": F("translated", "stream, and stream_options.include_usage for the job's token counts", BOOL),
    "keep_alive": F("dropped", "a hint; a load/unload request (no prompt) is answered as Ollama does", KEEP_ALIVE),
    "input": F("passed", "embeddings input", TEXT_OR_TEXTS, on=("embed",)),
    "truncate": F("dropped", "OpenAI engines refuse too-long input either way", BOOL, on=("embed",)),
    "dimensions": F("passed", "embeddings dimensions", INT, on=("embed",)),
    "options": F("translated", "see options.*", OBJECT),
    "max_output_tokens": F("dropped", "not an Ollama field (Ollama ignores it); the budget is options.num_predict"),
    "temperature": F("dropped", "not an Ollama field at the top level (Ollama ignores it); use options.temperature"),
    "top_p": F("dropped", "not an Ollama field at the top level (Ollama ignores it); use options.top_p"),
    "options.temperature": F("passed", "", NUMBER, to="temperature"),
    "options.top_p": F("passed", "", NUMBER, to="top_p"),
    "options.seed": F("passed", "", INT, to="seed"),
    "options.stop": F("passed", "", STOP, to="stop"),
    "options.presence_penalty": F("passed", "", NUMBER, to="presence_penalty"),
    "options.frequency_penalty": F("passed", "", NUMBER, to="frequency_penalty"),
    "options.num_predict": F("translated", "max_tokens (-1 and -2, as long as the model goes, are not sent)", INT),
    "options.top_k": F("passed", "as top_k (llama.cpp and vLLM read it)", INT, to="top_k"),
    "options.min_p": F("passed", "as min_p (llama.cpp, vLLM read it)", NUMBER, to="min_p"),
    "options.num_ctx": F("dropped", "a window hint: the engine's window is set where it runs; "
                                    "routing sends the request to a copy whose window holds it", INT),
    "options.num_gpu": F("dropped", "a load hint", INT),
    "options.num_thread": F("dropped", "a load hint", INT),
    "options.num_batch": F("dropped", "a load hint", INT),
    "options.main_gpu": F("dropped", "a load hint", INT),
    "options.use_mmap": F("dropped", "a load hint", BOOL),
    "options.numa": F("dropped", "a load hint", BOOL),
    "options.low_vram": F("dropped", "a load hint", BOOL),
    "options.repeat_penalty": F("translated", "repeat_penalty (llama.cpp reads it); repetition_penalty where the "
                                              "engine is vLLM (its /v1/models says owned_by vllm)", NUMBER,
                                to="repeat_penalty"),
    "options.repeat_last_n": F("refused", "no OpenAI counterpart", INT),
    "options.typical_p": F("refused", "no OpenAI counterpart", NUMBER),
    "options.mirostat": F("refused", "no OpenAI counterpart", INT),
    "options.num_keep": F("refused", "no OpenAI counterpart", INT),
    "options.penalize_newline": F("refused", "no OpenAI counterpart", BOOL),
}

# An engine's own name for a field, where it has one: the engine as its /v1/models calls itself
# (``owned_by``). vLLM reads ``repetition_penalty`` and ignores ``repeat_penalty``.
ENGINE_NAMES: dict[str, dict[str, str]] = {"vllm": {"options.repeat_penalty": "repetition_penalty"}}

RESPONSE_FORMAT = fields({"type": choice("text", "json_object", "json_schema"),
                          "json_schema": fields({"name": STRING, "schema": OBJECT, "strict": BOOL})},
                         required=("type",))
SAMPLING = ("chat", "complete")

# OpenAI caller -> Ollama-API engine (/v1/chat/completions, /v1/completions, /v1/embeddings).
# The type checks are OpenAI's own (https://platform.openai.com/docs/api-reference). Sampling values
# are not range-checked: Ollama, whose address this is, passes temperature 2.5 or top_p 1.5 to its
# engine, and apps written against it send them; the engine decides. Ranges stay where a value
# has no meaning at all (n, the log-probability counts).
OPENAI_TO_OLLAMA: Table = {
    "model": F("translated", "the engine's name for the model; answers carry the name the caller sent", MODEL,
               required=True),
    "messages": F("translated", "roles as is; text parts joined into content", MESSAGES, on=CHAT, required=True),
    "messages[].role": F("passed", "", STRING, on=CHAT, required=True),
    "messages[].content": F("translated", "a string as is; text parts joined", CONTENT, on=CHAT),
    "messages[].content[].type": F("translated", "text parts are joined into content, image_url parts become "
                                                 "images; any other part is refused", STRING, on=CHAT, required=True),
    "messages[].content[].text": F("translated", "joined into content", STRING, on=CHAT),
    "messages[].content[].image_url": F("translated", "data: URLs become base64 images; remote URLs are "
                                                      "refused (Pairwise never fetches them)", IMAGE_URL, on=CHAT),
    "messages[].tool_calls": F("translated", "arguments JSON string -> object", OPENAI_TOOL_CALLS, on=CHAT),
    "messages[].tool_call_id": F("translated", "tool_name of the call it answers", STRING, on=CHAT),
    "messages[].name": F("dropped", "a participant label", STRING, on=CHAT),
    "messages[].refusal": F("dropped", "an earlier refusal's text", NULL_OR_STRING, on=CHAT),
    "prompt": F("passed", "a string or a list of strings (joined); token ids are refused", PROMPT, on=GENERATE),
    "suffix": F("passed", "generate suffix", STRING, on=GENERATE),
    "tools": F("passed", "same shape in both APIs", TOOLS, on=CHAT),
    "tool_choice": F("translated", "\"auto\" as is; \"none\" sends no tools; \"required\" or a named "
                                   "function: the answer is constrained (format) to the tool's parameters and "
                                   "comes back as that call", TOOL_CHOICE, on=CHAT),
    "parallel_tool_calls": F("translated", "true is Ollama's behaviour; false keeps the first call", BOOL, on=CHAT),
    "response_format": F("translated", "json_object -> format \"json\"; json_schema -> format schema",
                         RESPONSE_FORMAT, on=CHAT),
    "reasoning_effort": F("translated", "think level", STRING, on=CHAT),
    "temperature": F("translated", "options.temperature", NUMBER, on=SAMPLING, to="options.temperature"),
    "top_p": F("translated", "options.top_p", NUMBER, on=SAMPLING, to="options.top_p"),
    "top_k": F("translated", "options.top_k", INT, on=SAMPLING, to="options.top_k"),
    "min_p": F("translated", "options.min_p", NUMBER, on=SAMPLING, to="options.min_p"),
    "seed": F("translated", "options.seed", INT, on=SAMPLING, to="options.seed"),
    "stop": F("translated", "options.stop", STOP, on=SAMPLING, to="options.stop"),
    "presence_penalty": F("translated", "options.presence_penalty", NUMBER, on=SAMPLING,
                          to="options.presence_penalty"),
    "frequency_penalty": F("translated", "options.frequency_penalty", NUMBER, on=SAMPLING,
                           to="options.frequency_penalty"),
    "max_tokens": F("translated", "options.num_predict", INT, on=SAMPLING, to="options.num_predict"),
    "max_completion_tokens": F("translated", "options.num_predict", INT, on=CHAT, to="options.num_predict"),
    "n": F("translated", "1 as is; more than 1 is refused", integer(1, 128), on=SAMPLING),
    "logprobs": F("translated", "chat: logprobs; completions: logprobs + top_logprobs count",
                  {"chat": BOOL, "complete": integer(0, 5)}),
    "top_logprobs": F("passed", "", integer(0, 20), on=CHAT),
    "stream": F("passed", "", BOOL, on=SAMPLING),
    "stream_options": F("translated", "the usage chunk is sent only when include_usage is asked",
                        fields({"include_usage": BOOL}), on=SAMPLING),
    "input": F("passed", "a string or a list of strings; token ids are refused", PROMPT, on=EMBED, required=True),
    "dimensions": F("passed", "embeddings dimensions", integer(1), on=EMBED),
    "encoding_format": F("translated", "base64 is encoded by Pairwise from the engine's floats",
                         choice("float", "base64"), on=EMBED),
    "user": F("dropped", "an end-user label", STRING),
    "store": F("dropped", "OpenAI's storage flag", BOOL, on=CHAT),
    "metadata": F("dropped", "OpenAI's storage tags", OBJECT, on=CHAT),
    "service_tier": F("dropped", "OpenAI's scheduling hint", STRING, on=SAMPLING),
    "logit_bias": F("refused", "no Ollama counterpart", OBJECT, on=SAMPLING),
    "echo": F("refused", "no Ollama counterpart", BOOL, on=GENERATE),
    "best_of": F("refused", "no Ollama counterpart", INT, on=GENERATE),
    "modalities": F("refused", "no Ollama counterpart", STRINGS, on=CHAT),
    "audio": F("refused", "no Ollama counterpart", OBJECT, on=CHAT),
    "prediction": F("refused", "no Ollama counterpart", OBJECT, on=CHAT),
    "web_search_options": F("refused", "no Ollama counterpart", OBJECT, on=CHAT),
}


def is_empty(value: object) -> bool:
    """Ollama reads an empty value as an absent one (litellm sends ``"images": []`` on every generate)."""
    return value is None or value == "" or value == [] or value == {}


def fate(table: Table, name: str) -> Fate:
    """A field's fate; a field the table does not know is refused."""
    row = table.get(name)
    return row.fate if row is not None else "refused"


def why(table: Table, name: str, otherwise: str) -> str:
    """Why a field is refused: its row's reason, else ``otherwise`` (a field the table does not know)."""
    row = table.get(name)
    return row.how if row is not None and row.how else otherwise


def copies(table: Table, prefix: str = "") -> dict[str, str]:
    """The fields under ``prefix`` copied as they are: their name (less the prefix) -> the other API's name."""
    return {name[len(prefix):]: row.to for name, row in table.items() if row.to and name.startswith(prefix)}
